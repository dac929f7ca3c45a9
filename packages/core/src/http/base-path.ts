/**
 * Where the API is mounted: the prefix of every route's path (`createPartnerApi`'s `basePath`).
 * @module
 */
import { accept, type Result, refuse } from "../result.js";

/**
 * The base path unless `basePath` says otherwise.
 * @example `${DEFAULT_BASE_PATH}/products`; // "/api/partner/products"
 */
export const DEFAULT_BASE_PATH = "/api/partner";

// "" (the root) or segments of RFC 3986 path characters, each non-empty, no trailing slash.
const BASE_PATH = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/;

/**
 * @example parseBasePath("/v1/partner"); // { ok: true, value: "/v1/partner" }
 * @example parseBasePath("/partner-api/").code; // "invalid_base_path"
 */
export function parseBasePath(text: string): Result<string, "invalid_base_path"> {
  if (BASE_PATH.test(text)) return accept(text);
  return refuse(
    "invalid_base_path",
    `basePath must be "" or "/" followed by path segments, without a trailing "/"; got ${JSON.stringify(text)}`,
  );
}
