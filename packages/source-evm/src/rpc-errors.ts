/**
 * Which RPC failures are worth a retry, and how any failure reaches the API: as a
 * `StoreUnavailableError` (503 service_unavailable with Retry-After), never as a stale value.
 * @module
 */
import { StoreUnavailableError } from "@partner-yield/core";
import { BaseError, HttpRequestError, RpcRequestError, TimeoutError } from "viem";

/** JSON-RPC codes of a node that is busy or failing, not of a call that is wrong. */
const TRANSIENT_RPC_CODES = new Set([-32603, -32005, -32007, 429, -1]);
const TRANSIENT_HTTP_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * True for a timeout, a connection that failed, a 5xx or 429, or a node's internal error: a
 * retry may succeed. False for a revert or a malformed call, which would fail the same way again.
 * @example isTransientRpcError(new TimeoutError({ body: {}, url: "http://node" })); // true
 */
export function isTransientRpcError(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  const cause = error.walk(
    (e) => e instanceof TimeoutError || e instanceof HttpRequestError || e instanceof RpcRequestError,
  );
  if (cause instanceof TimeoutError) return true;
  if (cause instanceof HttpRequestError)
    return cause.status === undefined || TRANSIENT_HTTP_STATUS.has(cause.status);
  if (cause instanceof RpcRequestError) return TRANSIENT_RPC_CODES.has(cause.code);
  return false;
}

/** A one-line reason for logs and error messages (viem's messages run to many lines). */
export function rpcErrorReason(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage;
  if (error instanceof Error) return error.message.split("\n")[0] ?? error.name;
  return String(error);
}

/**
 * @example throw unavailable("base RPC: eth_call failed", error, 5);
 */
export function unavailable(what: string, error: unknown, retryAfterSeconds: number): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error;
  return new StoreUnavailableError(`${what}: ${rpcErrorReason(error)}`, retryAfterSeconds, { cause: error });
}
