/**
 * Thrown by a store or source whose backend is unreachable, or that cannot answer from the state
 * it holds (a missing USD price). The core answers `503 service_unavailable` with `Retry-After`
 * (CONTRACT §6) instead of a 500, and reports the error with its cause to the `onError` hook.
 *
 * @example throw new StoreUnavailableError("postgres: connection refused", 2, { cause: error })
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
  /** The error code of the answer, from the one table of CONTRACT §6 (`ERRORS`). */
  readonly code = "service_unavailable";
  constructor(
    message: string,
    /** Seconds the client should wait before retrying. */
    readonly retryAfterSeconds = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
