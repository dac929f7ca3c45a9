/**
 * What a handler or a step answers (`Reply`), and the one place a reply becomes a `PlainResponse`
 * with the headers every response carries (CONTRACT §9).
 * @module
 */
import { type ApiError, problemBody } from "./errors.js";
import type { PlainResponse } from "./plain-request.js";

/** An answer before the common headers are added: status, serialised body, its own headers. */
export interface Reply {
  readonly status: number;
  readonly body: string;
  /** Lower-case names; e.g. `retry-after`, `allow`, the rate-limit headers. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
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
  };
}

/**
 * The response as sent: content type by status, the request id, `no-store`, `nosniff`, then
 * `extra` (the rate-limit headers), then the reply's own headers (they win on a clash). HEAD is GET
 * without the body (CONTRACT §9): same headers, and the `Content-Length` GET would send.
 */
export function render(
  reply: Reply,
  requestId: string,
  head: boolean,
  extra?: Readonly<Record<string, string>>,
): PlainResponse {
  const headers: Record<string, string> = {
    "content-type":
      reply.status >= 400 ? "application/problem+json; charset=utf-8" : "application/json; charset=utf-8",
    "x-request-id": requestId,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
  if (extra !== undefined) Object.assign(headers, extra);
  if (reply.headers !== undefined) Object.assign(headers, reply.headers);
  if (!head) return { status: reply.status, headers, body: reply.body };
  headers["content-length"] = String(encoder.encode(reply.body).byteLength);
  return { status: reply.status, headers, body: null };
}
