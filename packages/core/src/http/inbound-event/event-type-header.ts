/**
 * The header-match step of CONTRACT §5: `X-Partner-Event` equals the body's `event_type`
 * exactly (a missing header cannot equal it, docs/contract.md).
 * @module
 */
import { ApiError } from "../errors.js";
import type { PlainRequest } from "../plain-request.js";

/**
 * @throws ApiError `event_type_mismatch` (400).
 */
export function requireMatchingEventType(request: PlainRequest, eventType: string): void {
  const header = request.headers["x-partner-event"];
  if (header === eventType) return;
  throw new ApiError(
    "event_type_mismatch",
    header === undefined
      ? "the X-Partner-Event header is required and must equal event_type"
      : "X-Partner-Event does not equal the body's event_type",
  );
}
