/**
 * The Idempotency-Key step of CONTRACT §5: present, and 1–255 visible ASCII characters.
 * @module
 */
import { ApiError } from "../errors.js";
import type { PlainRequest } from "../plain-request.js";
import { IDEMPOTENCY_KEY_PATTERN } from "../schemas.js";

/**
 * The request's idempotency key.
 * @throws ApiError `missing_idempotency_key` or `invalid_idempotency_key` (400).
 */
export function requireIdempotencyKey(request: PlainRequest): string {
  const key = request.headers["idempotency-key"];
  if (key === undefined || key === "") {
    throw new ApiError("missing_idempotency_key", "the Idempotency-Key header is required");
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new ApiError(
      "invalid_idempotency_key",
      "Idempotency-Key must be 1 to 255 visible ASCII characters",
    );
  }
  return key;
}
