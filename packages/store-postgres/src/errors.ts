/**
 * Every failure of PostgreSQL or of the connection to it becomes `StoreUnavailableError`, so the
 * API answers `503 service_unavailable` with `Retry-After` (CONTRACT §6), never a 500, and never
 * acknowledges what it did not store.
 */
import { StoreUnavailableError } from "@partner-yield/core";

/** Seconds a client is asked to wait: long enough for a pool to reconnect or fail over. */
export const RETRY_AFTER_SECONDS = 2;

/** Wraps a failure of the database as `StoreUnavailableError`, keeping it as the cause. */
export function unavailable(operation: string, error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(
    `postgres: ${operation} failed: ${message}${typeof code === "string" ? ` (${code})` : ""}`,
    RETRY_AFTER_SECONDS,
    { cause: error },
  );
}

/** Runs `query`; any failure becomes `StoreUnavailableError`. */
export async function guarded<T>(operation: string, query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    throw unavailable(operation, error);
  }
}
