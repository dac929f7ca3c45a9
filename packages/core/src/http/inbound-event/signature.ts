/**
 * The signature step of CONTRACT §5: `X-Partner-Signature` is HMAC-SHA256 of the raw body bytes
 * with any of the partner's active secrets (rotation, CONTRACT §4), compared in constant time.
 * @module
 */
import { parseSignatureHeader, type SignatureVerifier } from "../../auth/signature.js";
import { ApiError } from "../errors.js";
import type { PlainRequest } from "../plain-request.js";

/**
 * The index of the secret (in the verifier's list) that signed the body.
 * @throws ApiError `invalid_signature` (401): missing, malformed, or matching no active secret.
 */
export function requireValidSignature(
  request: PlainRequest,
  body: Uint8Array,
  verifier: SignatureVerifier,
): number {
  const signature = parseSignatureHeader(request.headers["x-partner-signature"]);
  if (!signature.ok) throw new ApiError("invalid_signature", signature.reason);
  const index = verifier.match(body, signature.value);
  if (index < 0) throw signatureMismatch();
  return index;
}

/** `401 invalid_signature` for a body no active secret signed (or whose secret was revoked since). */
export function signatureMismatch(): ApiError {
  return new ApiError("invalid_signature", "X-Partner-Signature does not match the raw request body");
}
