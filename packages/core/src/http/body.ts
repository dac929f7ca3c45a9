/**
 * Errors a `BodyReader` (supplied by an adapter) rejects with, so the core can answer them in the
 * order of checks of CONTRACT §5.
 */

/** The body is larger than the limit, by Content-Length or by counting (→ 413 payload_too_large). */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  constructor(readonly limit: number) {
    super(`request body exceeds the limit of ${limit} bytes`);
  }
}

/** The body could not be read as declared, e.g. fewer bytes than Content-Length (→ 400 invalid_body). */
export class InvalidBodyError extends Error {
  override readonly name = "InvalidBodyError";
}
