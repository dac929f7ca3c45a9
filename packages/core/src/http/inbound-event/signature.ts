/**
 * The signature step of CONTRACT §5: `X-Partner-Signature` is HMAC-SHA256 of the raw body bytes
 * with any of the partner's active secrets (rotation, CONTRACT §4), compared in constant time.
 * @module
 */
import { parseSignatureHeader, type SignatureVerifier } from "../../auth/signature.js";
import { ApiError } from "../errors.js";
import type { PlainRequest } from "../plain-request.js";

/**
 * @throws ApiError `invalid_signature` (401): missing, malformed, or matching no secret.
 */
export function requireValidSignature(
  request: PlainRequest,
  body: Uint8Array,
  verifier: SignatureVerifier,
): void {
  const signature = parseSignatureHeader(request.headers["x-partner-signature"]);
  if (!signature.ok) throw new ApiError("invalid_signature", signature.reason);
  if (!verifier.verify(body, signature.value)) {
    throw new ApiError("invalid_signature", "X-Partner-Signature does not match the raw request body");
  }
}
