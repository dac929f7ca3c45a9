/**
 * The event signature of interface.md §4.5 / §5.5, computed by the harness itself (node:crypto),
 * not by the core it may be testing: lowercase hex of HMAC-SHA256 over the raw body, keyed with
 * the UTF-8 bytes of the signing secret.
 * @module
 */
import { createHmac } from "node:crypto";

/**
 * @example hmacHex("whsec_x", new TextEncoder().encode("{}")); // 64 lowercase hex digits
 */
export function hmacHex(secret: string, body: Uint8Array): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}
