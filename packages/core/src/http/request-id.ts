/**
 * Request ids (`X-Request-Id`, a problem's `request_id`): `req_` + 12 random hex digits fixed per
 * instance + a base-36 counter, unique across instances without coordination and cheap per request.
 * @module
 */
import { toHex } from "../encoding/hex.js";

/**
 * @example const next = requestIdGenerator(); next(); // "req_3f9a1c0d2b7e000000"
 */
export function requestIdGenerator(): () => string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  const prefix = `req_${toHex(bytes)}`;
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36).padStart(6, "0")}`;
}
