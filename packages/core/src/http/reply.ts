/**
 * What a handler or a step answers (`Reply`), and the one place a reply becomes a `PlainResponse`
 * with the headers every response carries (CONTRACT §9).
 * @module
 */
import type { Environment } from "../auth/environment.js";
import { type ApiError, problemBody } from "./errors.js";
import type { PlainResponse } from "./plain-request.js";

/** An answer before the common headers are added: status, serialised body, its own headers. */
export interface Reply {
  readonly status: number;
  readonly body: string;
  /** Lower-case names; e.g. `retry-after`, `allow`, the rate-limit headers. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** The problem's `error.code` (CONTRACT §6), for `PlainResponse.errorCode`. */
  readonly code?: string | undefined;
}

const encoder = new TextEncoder();

/** A 200 with a JSON body already serialised. */
export function okReply(body: string, headers?: Readonly<Record<string, string>>): Reply {
  return { status: 200, body, headers };
}

/** The problem+json answer of an error (CONTRACT §6), its own headers (`allow`, `retry-after`) kept. */
export function problemReply(error: ApiError, requestId: string): Reply {
  return {
    status: error.status,
    body: JSON.stringify(problemBody(error, requestId)),
    headers: error.headers,
    code: error.code,
  };
}

/**
 * The response as sent: content type by status, the request id, `no-store`, `nosniff`, then
 * `extra` (the rate-limit headers), then the reply's own headers (they win on a clash). HEAD is GET
 * without the body (CONTRACT §9): same headers, and the `Content-Length` GET would send. The
 * outcome (`ResponseOutcome`: route, error code, partner, key id, environment) rides on the same
 * object, every field present (maybe undefined) so that every response has one shape.
 */
export function render(
  reply: Reply,
  requestId: string,
  head: boolean,
  extra: Readonly<Record<string, string>> | undefined,
  route: string | undefined,
  partnerId: string | undefined,
  keyId: string | undefined,
  environment: Environment,
): PlainResponse {
  const headers = commonHeaders(reply.status, requestId);
  if (extra !== undefined) Object.assign(headers, extra);
  if (reply.headers !== undefined) Object.assign(headers, reply.headers);
  const errorCode = reply.code;
  if (head) headers["content-length"] = String(encoder.encode(reply.body).byteLength);
  return {
    status: reply.status,
    headers,
    body: head ? null : reply.body,
    route,
    errorCode,
    partnerId,
    keyId,
    environment,
  };
}

/** The headers every response carries (CONTRACT §9): content type by status, request id, `no-store`, `nosniff`. */
function commonHeaders(status: number, requestId: string): Record<string, string> {
  return {
    "content-type":
      status >= 400 ? "application/problem+json; charset=utf-8" : "application/json; charset=utf-8",
    "x-request-id": requestId,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
}

/**
 * The whole response of an error, as the API answers it (CONTRACT §6, §9): for an adapter or a
 * framework mount that answers on its own (a request it refuses before the core, a handler that
 * threw), so every package renders a problem the one way. No rate-limit headers.
 * @example problemResponse(new ApiError("internal_error", "an unexpected error occurred"), "req_1").status; // 500
 */
export function problemResponse(error: ApiError, requestId: string): PlainResponse & { body: string } {
  return {
    status: error.status,
    headers: { ...commonHeaders(error.status, requestId), ...error.headers },
    body: JSON.stringify(problemBody(error, requestId)),
    errorCode: error.code,
  };
}
