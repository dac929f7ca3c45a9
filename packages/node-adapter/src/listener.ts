/**
 * The node:http request listener: reads what the core needs straight from `IncomingMessage`
 * (no Web `Request` is built), calls `handle()`, and writes the `PlainResponse` with one
 * `writeHead` and one `end`. Also answers `GET /healthz` and `GET /readyz` (no auth), logs one
 * JSON line per request, and counts requests in flight for graceful shutdown.
 * @module
 */
import { randomBytes } from "node:crypto";
import { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { PartnerApiHandler, PlainResponse } from "@partner-yield/core";
import {
  type BodyState,
  createBodyReader,
  declaredLength,
  hasBody,
  newBodyState,
  truncateBody,
} from "./request-body.js";
import { logPath, type RequestLogEntry, type RequestLogOption, resolveRequestLog } from "./request-log.js";

export interface ListenerOptions {
  /**
   * A body the core did not read (it answered before, e.g. 401) is drained, keeping the connection
   * alive, when its Content-Length is at most this many bytes; a larger or chunked one closes the
   * connection after the response instead of being read. Default 65536.
   */
  readonly drainLimitBytes?: number | undefined;
  /** Request log: `"json"` lines on stdout (default), `"none"`, or a function. */
  readonly log?: RequestLogOption | undefined;
}

/** A node:http request listener with the state graceful shutdown needs. */
export interface PartnerListener {
  (req: IncomingMessage, res: ServerResponse): void;
  /**
   * For `server.on("checkContinue", …)`: like the listener, but `100 Continue` is sent only when the
   * core asks for the body, so an unauthenticated or oversized upload is refused before it starts.
   */
  readonly checkContinue: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * For `server.on("clientError", …)`: a body cut short by the client (fewer bytes than
   * Content-Length, then end of stream) is answered `400 invalid_body` by the core; a protocol error
   * after a request (e.g. more bytes than Content-Length) lets that request be answered, then
   * closes the connection. Otherwise it does what node does by default: 400, 408 or 431, then close.
   */
  readonly clientError: (error: Error, socket: Duplex) => void;
  /** Requests received whose response is not finished yet. */
  readonly inFlight: number;
  /** True after `drain()`. */
  readonly draining: boolean;
  /** Starts draining: `/readyz` answers 503 and every response asks the client to close the connection. */
  drain(): void;
  /** Resolves true once no request is in flight, or false after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<boolean>;
}

/** The API handler, plus readiness when it has one (a `PartnerApi` does). */
export type ListenerTarget = PartnerApiHandler & { ready?: () => Promise<boolean> };

/** A sane incoming request id is echoed; anything else gets a generated one (by the core). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const OPS_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
} as const;

/**
 * Mounts `api.handle()` on node:http.
 *
 * @example
 * const listener = createListener(api, { log: "none" });
 * const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, listener);
 * server.on("checkContinue", listener.checkContinue).on("clientError", listener.clientError);
 * server.listen(8787, "127.0.0.1");
 */
export function createListener(api: ListenerTarget, options: ListenerOptions = {}): PartnerListener {
  const drainLimit = options.drainLimitBytes ?? 65_536;
  const log = resolveRequestLog(options.log);
  const nextOpsId = opsRequestIdGenerator();
  let inFlight = 0;
  let draining = false;
  let idleWaiters: (() => void)[] = [];
  /** The latest request on each connection, until it is done (for `clientError`). */
  const current = new WeakMap<Duplex, ActiveRequest>();

  function finished(): void {
    inFlight--;
    if (inFlight === 0 && idleWaiters.length > 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  function serve(req: IncomingMessage, res: ServerResponse, deferContinue: boolean): void {
    const started = performance.now();
    inFlight++;
    // A request is done when BOTH the handler has settled and the response is closed (finished, or
    // the client went away): shutdown waits for handlers too, so no store is closed under one.
    let pending = 2;
    let requestId = "";
    let status = 0;
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? "GET";
    const done = () => {
      if (--pending > 0) return;
      finished();
      log?.(entry(method, path, res, status, requestId, started));
    };
    res.once("close", done);

    if (path === "/healthz" || path === "/readyz") {
      requestId = incomingRequestId(req) ?? nextOpsId();
      answerOps(req, res, path, method, requestId).then((written) => {
        status = written;
        done();
      }, done);
      return;
    }

    const state = newBodyState();
    const active: ActiveRequest = { res, body: state, closeAfter: false };
    const socket = req.socket;
    current.set(socket, active);
    const release = () => {
      if (current.get(socket) === active) current.delete(socket);
      done();
    };
    let response: Promise<PlainResponse>;
    try {
      response = api.handle({
        method,
        path,
        query: q === -1 ? "" : url.slice(q + 1),
        headers: plainHeaders(req),
        body: hasBody(req) ? createBodyReader(req, state, deferContinue ? res : undefined) : undefined,
        clientAddress: req.socket.remoteAddress,
        requestId: incomingRequestId(req),
      });
    } catch (error) {
      response = Promise.reject(error);
    }
    response
      .then(
        (plain) => {
          requestId = plain.headers["x-request-id"] ?? "";
          status = plain.status;
          const close = draining || active.closeAfter || mustClose(req, state, deferContinue, drainLimit);
          write(res, method, plain, close);
        },
        () => {
          requestId = incomingRequestId(req) ?? nextOpsId();
          status = 500;
          write(res, method, internalError(requestId), true);
        },
      )
      .then(release, release);
  }

  async function answerOps(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    method: string,
    requestId: string,
  ): Promise<number> {
    const headers = { ...OPS_HEADERS, "x-request-id": requestId };
    const close = draining || (hasBody(req) && !req.complete);
    if (method !== "GET" && method !== "HEAD") {
      const body = '{"status":"method_not_allowed"}';
      write(res, method, { status: 405, headers: { ...headers, allow: "GET, HEAD" }, body }, close);
      return 405;
    }
    let status = 200;
    let body = '{"status":"ok"}';
    if (path === "/readyz") {
      let ready = !draining;
      if (ready && api.ready !== undefined) ready = await api.ready().catch(() => false);
      status = ready ? 200 : 503;
      body = ready ? '{"status":"ready"}' : draining ? '{"status":"draining"}' : '{"status":"not_ready"}';
    }
    write(res, method, { status, headers, body: method === "HEAD" ? null : body }, close);
    return status;
  }

  const listener = ((req: IncomingMessage, res: ServerResponse) => serve(req, res, false)) as PartnerListener;
  Object.defineProperties(listener, {
    checkContinue: { value: (req: IncomingMessage, res: ServerResponse) => serve(req, res, true) },
    clientError: {
      value: (error: NodeJS.ErrnoException, socket: Duplex) => {
        const active = current.get(socket);
        // A parse error (HPE_*) after a request was received: that request can still be answered.
        if (active !== undefined && !active.res.headersSent && error.code?.startsWith("HPE_") === true) {
          if (error.code === "HPE_INVALID_EOF_STATE") truncateBody(active.body);
          active.closeAfter = true;
          return;
        }
        refuseConnection(error, socket, active?.res.headersSent === true);
      },
    },
    inFlight: { get: () => inFlight },
    draining: { get: () => draining },
    drain: {
      value: () => {
        draining = true;
      },
    },
    whenIdle: {
      value: (timeoutMs: number) =>
        new Promise<boolean>((resolve) => {
          if (inFlight === 0) {
            resolve(true);
            return;
          }
          const timer = setTimeout(() => {
            idleWaiters = idleWaiters.filter((w) => w !== wake);
            resolve(false);
          }, timeoutMs);
          const wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
          idleWaiters.push(wake);
        }),
    },
  });
  return listener;
}

interface ActiveRequest {
  readonly res: ServerResponse;
  readonly body: BodyState;
  /** A protocol error followed this request: answer it, then close the connection. */
  closeAfter: boolean;
}

/** What node does with a client error when nobody listens: a bare 400 / 408 / 413 / 431, then close. */
function refuseConnection(error: NodeJS.ErrnoException, socket: Duplex, responseStarted: boolean): void {
  if (socket.writable && !responseStarted) {
    const status =
      error.code === "HPE_HEADER_OVERFLOW"
        ? 431
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? 408
          : error.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
            ? 413
            : 400;
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
  }
  socket.destroy(error);
}

/** node lower-cases header names and joins repeats with ", "; only set-cookie stays an array. */
function plainHeaders(req: IncomingMessage): Readonly<Record<string, string | undefined>> {
  const headers = req.headers;
  if (headers["set-cookie"] === undefined) return headers as Record<string, string | undefined>;
  return { ...headers, "set-cookie": headers["set-cookie"].join(", ") };
}

function incomingRequestId(req: IncomingMessage): string | undefined {
  const id = req.headers["x-request-id"];
  return typeof id === "string" && SANE_REQUEST_ID.test(id) ? id : undefined;
}

/**
 * Whether the connection must close after this response because the request's body is not (and
 * will not be) read to its end: reading stopped at the limit; `100 Continue` was never sent, so the
 * client may or may not send the body; or the core did not read a body too large (or of unknown
 * size) to drain. A small unread body is left to node, which discards it and keeps the connection.
 */
function mustClose(
  req: IncomingMessage,
  state: BodyState,
  deferContinue: boolean,
  drainLimit: number,
): boolean {
  if (req.complete) return false;
  if (state.abandoned || state.truncated) return true;
  if (deferContinue && !state.continued) return true;
  if (state.requested) return false;
  const declared = declaredLength(req);
  return declared === undefined || declared > drainLimit;
}

/** One `writeHead`, one `end`; Content-Length set here. */
function write(res: ServerResponse, method: string, plain: PlainResponse, close: boolean): void {
  if (res.headersSent || res.destroyed) return;
  const headers: OutgoingHttpHeaders = { ...plain.headers };
  if (plain.body !== null) headers["content-length"] = Buffer.byteLength(plain.body);
  else if (method !== "HEAD") headers["content-length"] = 0;
  if (close) headers["connection"] = "close";
  try {
    res.writeHead(plain.status, headers);
  } catch {
    // A header value node refuses (only a wrapped handler could produce one): answer 500 instead.
    const fallback = internalError(plain.headers["x-request-id"] ?? "");
    res.writeHead(fallback.status, {
      ...fallback.headers,
      "content-length": Buffer.byteLength(fallback.body!),
      connection: "close",
    });
    res.end(fallback.body);
    return;
  }
  res.end(plain.body ?? undefined);
}

function internalError(requestId: string): PlainResponse & { body: string } {
  const body = JSON.stringify({
    success: false,
    type: "https://partner-yield.dev/errors/internal_error",
    title: "Internal error",
    status: 500,
    code: "internal_error",
    detail: "an unexpected error occurred",
    request_id: requestId,
  });
  return {
    status: 500,
    headers: {
      "content-type": "application/problem+json; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-request-id": requestId,
    },
    body,
  };
}

function entry(
  method: string,
  path: string,
  res: ServerResponse,
  status: number,
  requestId: string,
  started: number,
): RequestLogEntry {
  const base = {
    time: new Date().toISOString(),
    level: "info" as const,
    msg: "request" as const,
    request_id: requestId,
    method,
    path: logPath(path),
    status,
    duration_ms: Math.round((performance.now() - started) * 10) / 10,
  };
  return res.writableFinished ? base : { ...base, aborted: true };
}

/** Request ids for the adapter's own endpoints, in the core's shape: `req_` + 12 hex + counter. */
function opsRequestIdGenerator(): () => string {
  const prefix = `req_${randomBytes(6).toString("hex")}`;
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36).padStart(6, "0")}`;
}
