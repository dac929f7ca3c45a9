/**
 * Thrown by a store or source whose backend is unreachable. The core answers
 * `503 service_unavailable` with `Retry-After` (CONTRACT §6) instead of a 500.
 *
 * @example throw new StoreUnavailableError("postgres: connection refused", 2)
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
  readonly code = "store_unavailable";
  constructor(
    message: string,
    /** Seconds the client should wait before retrying. */
    readonly retryAfterSeconds = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
