/**
 * The body-size step of CONTRACT §5: the limit is checked against what the adapter reports
 * (Content-Length before reading, bytes while reading), and the body is read only now, after
 * authentication and the rate limit.
 * @module
 */
import { BodyTooLargeError, InvalidBodyError } from "./body.js";
import { ApiError } from "./errors.js";
import type { PlainRequest } from "./plain-request.js";

/**
 * The raw body bytes, at most `limit`.
 * @throws ApiError `payload_too_large` (413) over the limit; `invalid_body` (400) when the body
 * could not be read as declared.
 */
export async function readBody(request: PlainRequest, limit: number): Promise<Uint8Array> {
  const body = request.body;
  if (body === undefined) return new Uint8Array(0);
  if (body instanceof Uint8Array) {
    if (body.byteLength > limit) throw tooLarge(limit);
    return body;
  }
  try {
    return await body(limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw tooLarge(limit);
    if (error instanceof InvalidBodyError) throw new ApiError("invalid_body", error.message);
    throw error;
  }
}

function tooLarge(limit: number): ApiError {
  return new ApiError("payload_too_large", `the request body exceeds the limit of ${limit} bytes`);
}
