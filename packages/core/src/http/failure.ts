/**
 * The one place an error becomes an answer (CONTRACT §6): an `ApiError` is its own problem; a
 * `StoreUnavailableError` is `503 service_unavailable` with `Retry-After` (as is the `ApiError`
 * `503 event_store_full`, which is reported too); anything else is
 * `500 internal_error` without details. Every 5xx is reported to `onError` with its cause.
 * @module
 */
import { StoreUnavailableError } from "../stores/store-unavailable-error.js";
import { ApiError } from "./errors.js";
import type { ErrorHook } from "./partner-api-options.js";
import { problemReply, type Reply } from "./reply.js";

/**
 * @example replyToFailure(new StoreUnavailableError("db down", 2), "req_1", log).status; // 503, and log was called
 */
export function replyToFailure(error: unknown, requestId: string, onError: ErrorHook | undefined): Reply {
  if (error instanceof ApiError) {
    // The operator must learn that the in-memory event store is full: nothing else tells them.
    if (error.code === "event_store_full") onError?.(error, requestId, { status: 503, code: error.code });
    return problemReply(error, requestId);
  }
  if (error instanceof StoreUnavailableError) {
    onError?.(error, requestId, { status: 503, code: error.code });
    const unavailable = new ApiError(error.code, "a backing service is unavailable; retry later", {
      headers: { "retry-after": String(error.retryAfterSeconds) },
    });
    return problemReply(unavailable, requestId);
  }
  onError?.(error, requestId, { status: 500, code: "internal_error" });
  return problemReply(new ApiError("internal_error", "an unexpected error occurred"), requestId);
}
