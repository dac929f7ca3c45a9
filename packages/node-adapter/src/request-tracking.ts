/**
 * What the listener keeps on node's own objects so that every request is counted done exactly
 * once: on a response, its request's exchange (one shared `close` listener for all responses); on
 * a connection, its requests not yet closed (a pipelined response still queued gets no `close` of
 * its own) and its latest request (for `clientError`, which node reports on the connection).
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { ApiError } from "@partner-yield/core";
import type { BodyState } from "./request-body.js";

/** One request as tracking sees it: told once when its response (or connection) has closed. */
export interface Closable {
  responseClosed(): void;
}

/** The request a connection is on, as `clientError` needs it. */
export interface ActiveRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly body: BodyState;
  /** A protocol error followed this request: answer it, then close the connection. */
  closeAfter: boolean;
  /** Answers the request with this problem now (and closes the connection); the handler's answer is dropped. */
  refuse(error: ApiError): void;
}

/** On a connection: its latest request, until it is done (for `clientError`). */
const CURRENT = Symbol("partner-yield.currentRequest");
/** On a response: its request's exchange, for the shared `close` listener. */
const EXCHANGE = Symbol("partner-yield.exchange");
/**
 * On a connection: its requests whose response has not closed. When the connection closes they
 * are all done, also those whose response was still queued behind a pipelined one (node emits no
 * `close` on those responses).
 */
const UNFINISHED = Symbol("partner-yield.unfinished");

type TrackedSocket = Duplex & {
  [UNFINISHED]?: Set<Closable> | undefined;
  [CURRENT]?: ActiveRequest | undefined;
};
type TrackedResponse = ServerResponse & { [EXCHANGE]?: Closable | undefined };

/** The `close` listener of every response (one function, not one per request). */
function onResponseClose(this: TrackedResponse): void {
  this[EXCHANGE]?.responseClosed();
}

/** The `close` listener of every connection: the requests still open on it are done. */
function onSocketClose(this: TrackedSocket): void {
  const open = this[UNFINISHED];
  if (open === undefined) return;
  this[UNFINISHED] = undefined;
  for (const exchange of open) exchange.responseClosed();
}

/**
 * Tracks `exchange` until its response closes or its connection does (at once if it has), and
 * makes it its connection's current request.
 */
export function track(socket: Duplex, res: ServerResponse, exchange: Closable & ActiveRequest): void {
  (res as TrackedResponse)[EXCHANGE] = exchange;
  res.on("close", onResponseClose);
  const tracked = socket as TrackedSocket;
  tracked[CURRENT] = exchange;
  if (socket.destroyed) {
    queueMicrotask(() => exchange.responseClosed());
    return;
  }
  let open = tracked[UNFINISHED];
  if (open === undefined) {
    open = new Set();
    tracked[UNFINISHED] = open;
    socket.once("close", onSocketClose);
  }
  open.add(exchange);
}

/** `exchange`'s response has closed: its connection no longer waits for it. */
export function untrack(socket: Duplex, exchange: Closable): void {
  (socket as TrackedSocket)[UNFINISHED]?.delete(exchange);
}

/** `exchange` is done: it is no longer its connection's current request. */
export function releaseCurrent(socket: Duplex, exchange: ActiveRequest): void {
  const tracked = socket as TrackedSocket;
  if (tracked[CURRENT] === exchange) tracked[CURRENT] = undefined;
}

/** The request `socket` is on, if it is not done. */
export function currentRequest(socket: Duplex): ActiveRequest | undefined {
  return (socket as TrackedSocket)[CURRENT];
}
