/**
 * The request log line of one answered request (or refused `CONNECT`), every field present so
 * every entry has one shape (undefined ones are left out of the JSON).
 * @module
 */
import type { IncomingMessage } from "node:http";
import type { PlainResponse } from "@partner-yield/core";
import { type BodyState, declaredLength } from "./request-body.js";
import { levelOf, logInstance, logPath, type RequestLogEntry } from "./request-log.js";

/** What a request's log line is made of. */
export interface LoggedExchange {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly requestId: string;
  /** `performance.now()` at the request's arrival. */
  readonly started: number;
  readonly outcome: Pick<PlainResponse, "route" | "errorCode" | "partnerId" | "keyId"> | undefined;
  readonly clientAddress: string | undefined;
  readonly body: BodyState | undefined;
  readonly req: IncomingMessage | undefined;
  readonly bytesOut: number;
}

/** The entry of `x`, `aborted` when its response did not finish (the client went away). */
export function requestLogEntry(x: LoggedExchange, aborted: boolean): RequestLogEntry {
  const outcome = x.outcome;
  return {
    time: isoNow(),
    level: levelOf(x.status),
    msg: "request",
    instance: logInstance(),
    request_id: x.requestId,
    method: x.method,
    path: logPath(x.path),
    route: outcome?.route,
    status: x.status,
    code: outcome?.errorCode,
    partner_id: outcome?.partnerId,
    key_id: outcome?.keyId,
    client_address: x.clientAddress,
    bytes_in: bytesIn(x.req, x.body),
    bytes_out: x.bytesOut,
    duration_ms: Math.round((performance.now() - x.started) * 10) / 10,
    aborted: aborted ? true : undefined,
  };
}

/** Body bytes read; when the core did not read the body, what its Content-Length declared. */
function bytesIn(req: IncomingMessage | undefined, body: BodyState | undefined): number {
  if (req === undefined) return 0;
  if (body !== undefined && body.received > 0) return body.received;
  return declaredLength(req) ?? 0;
}

let isoMs = Number.NaN;
let isoText = "";

/** `new Date().toISOString()`, computed once per millisecond (many requests end in the same one). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}
