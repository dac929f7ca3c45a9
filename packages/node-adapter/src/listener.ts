/**
 * The node:http request listener: reads what the core needs straight from `IncomingMessage`
 * (no Web `Request` is built), calls `handle()`, and writes the `PlainResponse` with one
 * `writeHead` and one `end`. The requests node:http delivers in one turn of the event loop are
 * handed to `handle()` together, in the order received, once that turn's reads are done. Also
 * answers `GET /healthz` and `GET /readyz` (no auth), refuses what node:http cannot parse (and
 * `CONNECT`) with problem+json like the core's, logs one JSON line per request and one per
 * unexpected error, and counts requests in flight for graceful shutdown.
 * @module
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { ApiError, type PartnerApiHandler, type PlainResponse } from "@partner-yield/core";
import { type ConnectionGuard, resetBeforeAccept } from "./connections.js";
import { incomingRequestId, plainHeaders } from "./plain-request.js";
import { protocolRefusal } from "./protocol-checks.js";
import {
  ANY_ROUTE_METHODS,
  clientErrorProblem,
  internalError,
  problemResponse,
  rawResponse,
} from "./refusal.js";
import {
  type BodyState,
  createBodyReader,
  declaredLength,
  hasBody,
  newBodyState,
  truncateBody,
} from "./request-body.js";
import {
  levelOf,
  logInstance,
  logPath,
  type RequestLogEntry,
  type RequestLogOption,
  resolveErrorLog,
  resolveRequestLog,
} from "./request-log.js";
import { splitTarget } from "./request-target.js";
import { settlesWithin } from "./settles-within.js";

/**
 * What the listener knows of one answered request: the response (its outcome fields, when the
 * core answered it), the path asked for, the status sent.
 */
export interface AnsweredRequest {
  readonly outcome: ResponseOutcomeFields | undefined;
  readonly path: string;
  readonly status: number;
  /** From the request's arrival to its response's end. */
  readonly durationMs: number;
}

/**
 * The outcome fields of a core response (`ResponseOutcome`: route template, error code, partner
 * id) and its headers; all optional, so a response without them (the adapter's own) is counted too.
 */
export type ResponseOutcomeFields = Pick<PlainResponse, "headers"> & {
  readonly route?: string | undefined;
  readonly errorCode?: string | undefined;
  readonly partnerId?: string | undefined;
};

export interface ListenerOptions {
  /**
   * A body the core did not read (it answered before, e.g. 401) is drained, keeping the connection
   * alive, when its Content-Length is at most this many bytes; a larger or chunked one closes the
   * connection after the response instead of being read. Default 65536.
   */
  readonly drainLimitBytes?: number | undefined;
  /**
   * Request log: `"json"` lines on stdout (default), `"none"`, or a function. Errors of a handler
   * that throws or rejects (answered 500) are logged too: on stderr, or to the function.
   */
  readonly log?: RequestLogOption | undefined;
  /**
   * The connection guard of the server (`guardConnections`): told when each connection is busy,
   * the source of each request's client address (as accepted, so a reset cannot erase it), and,
   * while it is crowded, `/healthz`, `/readyz`, 401 and 429 answers close their connection.
   */
  readonly connections?: ConnectionGuard | undefined;
  /** Log `/healthz` and `/readyz` requests too (default false: a probe every second is noise). */
  readonly logHealthChecks?: boolean | undefined;
  /**
   * Called once per request when it is done (answered and its response closed), with its outcome:
   * the server's metrics hook. Not called for `CONNECT` or a connection refused before a request.
   */
  readonly requestDone?: ((request: AnsweredRequest) => void) | undefined;
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
   * For `server.on("clientError", …)`. While a request's body is arriving, a parse error (a body
   * cut short by end of stream, a malformed chunk, a bad Transfer-Encoding) ends the body there, and
   * the core answers `400 invalid_body` at once; the request timeout answers `408 request_timeout`.
   * A parse error after a complete request (e.g. more bytes than Content-Length) lets that request
   * be answered. Anything else (an unparsable request line or header, headers too large or too
   * slow) is refused with a problem+json 400, 408 or 431 written to the socket. The connection
   * closes in every case.
   */
  readonly clientError: (error: Error, socket: Duplex) => void;
  /**
   * For `server.on("checkExpectation", …)`: a request with an `Expect` other than `100-continue`
   * is answered `400 invalid_parameter` in problem+json and logged (node alone answers a bare 417).
   */
  readonly checkExpectation: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * For `server.on("connect", …)`: `CONNECT` is answered `405 method_not_allowed` (this server is
   * not a proxy) with `Allow: GET, HEAD, POST`, and the connection closes. Without a listener,
   * node:http would close the connection without an answer.
   */
  readonly connect: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
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
export type ListenerTarget = PartnerApiHandler & {
  ready?: () => Promise<boolean>;
  /**
   * Named checks of the stores (e.g. `events: () => pool ping`), each reported by `/readyz`
   * ("ok", or "unavailable" when it rejects or takes over 2 s). A shared store down does not
   * make `/readyz` fail: every instance shares it, and taking them all out of the load balancer
   * at once helps nobody (the requests that need it are answered 503 with Retry-After).
   */
  readinessChecks?: Readonly<Record<string, () => Promise<void>>> | undefined;
  /**
   * Named checks of this instance's own state (e.g. `database_pool`: its pool exhausted), each
   * answering "ok" or the state that makes `/readyz` answer 503 (e.g. "exhausted").
   */
  instanceChecks?: Readonly<Record<string, () => string>> | undefined;
};

/** Longest a store may take to answer a `/readyz` check. */
const READINESS_CHECK_MS = 2000;

const OPS_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
} as const;
/** On a connection: its latest request, until it is done (for `clientError`). */
const CURRENT = Symbol("partner-yield.currentRequest");
/** On a response: its request's `Exchange`, for the shared `close` listener. */
const EXCHANGE = Symbol("partner-yield.exchange");
/**
 * On a connection: its requests whose response has not closed. When the connection closes they
 * are all done, also those whose response was still queued behind a pipelined one (node emits no
 * `close` on those responses).
 */
const UNFINISHED = Symbol("partner-yield.unfinished");

interface Closable {
  responseClosed(): void;
}
type TrackedSocket = Duplex & { [UNFINISHED]?: Set<Closable> | undefined };

/** The `close` listener of every response (one function, not one per request). */
function onResponseClose(this: ServerResponse): void {
  (this as ServerResponse & { [EXCHANGE]?: Closable })[EXCHANGE]?.responseClosed();
}

/** The `close` listener of every connection: the requests still open on it are done. */
function onSocketClose(this: TrackedSocket): void {
  const open = this[UNFINISHED];
  if (open === undefined) return;
  this[UNFINISHED] = undefined;
  for (const exchange of open) exchange.responseClosed();
}

/** Tracks `exchange` until its response closes or its connection does (at once if it has). */
function trackOnSocket(socket: TrackedSocket, exchange: Closable): void {
  if (socket.destroyed) {
    queueMicrotask(() => exchange.responseClosed());
    return;
  }
  let open = socket[UNFINISHED];
  if (open === undefined) {
    open = new Set();
    socket[UNFINISHED] = open;
    socket.once("close", onSocketClose);
  }
  open.add(exchange);
}

/** The code prefix of node's HTTP parser errors (llhttp), e.g. `HPE_INVALID_CHUNK_SIZE`. */
const PARSE_ERROR = "HPE_";

/**
 * Mounts `api.handle()` on node:http.
 *
 * @example
 * const listener = createListener(api, { log: "none" });
 * const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, listener);
 * server.on("checkContinue", listener.checkContinue).on("clientError", listener.clientError);
 * server.on("connect", listener.connect);
 * server.listen(8787, "127.0.0.1");
 */
export function createListener(api: ListenerTarget, options: ListenerOptions = {}): PartnerListener {
  const drainLimit = options.drainLimitBytes ?? 65_536;
  const log = resolveRequestLog(options.log);
  const logError = resolveErrorLog(options.log);
  const nextOpsId = opsRequestIdGenerator();
  let inFlight = 0;
  let draining = false;
  let idleWaiters: (() => void)[] = [];
  /** Connections whose parser failed during a request that is still answered (it closes them after). */
  const failed = new WeakSet<Duplex>();
  const connections = options.connections;
  const requestDone = options.requestDone;
  const logHealth = options.logHealthChecks === true;

  function finished(): void {
    inFlight--;
    if (inFlight === 0 && idleWaiters.length > 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  /**
   * One request and its response. A class rather than closures: its methods are shared by every
   * request, so a request allocates this one object (and its promise) instead of six functions.
   */
  class Exchange implements ActiveRequest {
    /**
     * A request is done when BOTH the handler has settled and the response is closed (finished,
     * or the client went away): shutdown waits for handlers too, so no store is closed under one.
     */
    pending = 2;
    requestId = "";
    status = 0;
    answered = false;
    closeAfter = false;
    /** The response (or its connection) has closed. */
    closed = false;
    /** The response answered (its outcome fields: route, error code, partner), for the log and `requestDone`. */
    outcome: PlainResponse | undefined = undefined;
    /** Bytes of the response body written (for the log). */
    bytesOut = 0;
    readonly body: BodyState = newBodyState();

    constructor(
      readonly req: IncomingMessage,
      readonly res: ServerResponse,
      readonly method: string,
      readonly path: string,
      readonly query: string,
      readonly started: number,
      /** Came through `checkContinue`: `100 Continue` waits until the core asks for the body. */
      readonly deferContinue: boolean,
      /**
       * The client's address, read when the request arrived: a connection reset before the
       * request is handed to the core has no `remoteAddress` by then, and its failed guess must
       * still count against its own address (CONTRACT §9), not the shared bucket of unknown ones.
       */
      readonly clientAddress: string | undefined,
    ) {}

    /** The response closed, or its connection did: counted once. */
    responseClosed(): void {
      if (this.closed) return;
      this.closed = true;
      (this.req.socket as TrackedSocket)[UNFINISHED]?.delete(this);
      this.done();
    }

    done(): void {
      if (--this.pending > 0) return;
      finished();
      connections?.requestEnded(this.req.socket);
      requestDone?.({
        outcome: this.outcome,
        path: this.path,
        status: this.status,
        durationMs: performance.now() - this.started,
      });
      if (log !== undefined && (logHealth || !isOps(this.path))) log(entry(this, !this.res.writableFinished));
    }

    /** The one answer of this request: the first call writes (or, client gone, records) it. */
    answer(plain: PlainResponse, close: boolean): void {
      if (this.answered) return;
      this.answered = true;
      this.requestId = plain.headers["x-request-id"] ?? "";
      this.status = plain.status;
      this.outcome = plain;
      this.bytesOut = write(this.res, this.method, plain, close);
    }

    refuse(error: ApiError): void {
      this.answer(problemResponse(error, incomingRequestId(this.req) ?? nextOpsId()), true);
    }

    release(): void {
      const socket = this.req.socket as Duplex & { [CURRENT]?: Exchange | undefined };
      if (socket[CURRENT] === this) socket[CURRENT] = undefined;
      this.done();
    }
  }

  function serve(req: IncomingMessage, res: ServerResponse, deferContinue: boolean): void {
    const socket = req.socket;
    const clientAddress = connections?.addressOf(socket) ?? socket.remoteAddress;
    if (clientAddress === undefined && resetBeforeAccept(socket as Socket)) {
      // Reset before this server could read its peer (no connection guard to have refused it):
      // its guess could count against no address (CONTRACT §9), and nobody reads the answer.
      socket.destroy();
      return;
    }
    const started = performance.now();
    inFlight++;
    const { path, query } = splitTarget(req.url ?? "/");
    connections?.requestStarted(socket);
    const exchange = new Exchange(
      req,
      res,
      req.method ?? "GET",
      path,
      query,
      started,
      deferContinue,
      clientAddress,
    );
    (res as ServerResponse & { [EXCHANGE]?: Exchange })[EXCHANGE] = exchange;
    res.on("close", onResponseClose);
    trackOnSocket(socket, exchange);
    (socket as Duplex & { [CURRENT]?: Exchange })[CURRENT] = exchange;
    queued.push(exchange);
    if (queued.length === 1) setImmediate(dispatchQueued);
  }

  /**
   * Requests received in this turn of the event loop, not yet handed to the core. Under load one
   * turn reads many connections (about 40 requests a turn with 50 busy connections); handling them
   * together after the reads, rather than each between its own read and write, keeps the core's
   * code and data in the CPU's caches from one request to the next (docs/performance.md).
   */
  let queued: Exchange[] = [];

  /** Hands every queued request to the core, in the order received (`setImmediate`: after the reads). */
  function dispatchQueued(): void {
    const batch = queued;
    queued = [];
    for (const exchange of batch) dispatch(exchange);
  }

  /** Starts the handling of one request; its answer is written when the handler settles. */
  function dispatch(exchange: Exchange): void {
    const { req, res, method, path, deferContinue, clientAddress } = exchange;
    const ops = isOps(path);
    let response: Promise<PlainResponse>;
    try {
      const refusal = protocolRefusal(req);
      if (refusal !== undefined) {
        exchange.closeAfter = true;
        response = Promise.resolve(problemResponse(refusal, incomingRequestId(req) ?? nextOpsId()));
      } else if (ops) {
        response = answerOps(path, method, incomingRequestId(req) ?? nextOpsId());
      } else {
        response = api.handle({
          method,
          path,
          query: exchange.query,
          headers: plainHeaders(req),
          body: hasBody(req)
            ? createBodyReader(req, exchange.body, deferContinue ? res : undefined)
            : undefined,
          clientAddress,
          requestId: incomingRequestId(req),
        });
      }
    } catch (error) {
      // Also what protocolRefusal or reading the request threw: this request gets a 500, the
      // other requests of the batch are handled as usual.
      response = Promise.reject(error);
    }
    void settle(exchange, response, ops, deferContinue);
  }

  /** Answers with what the handler gave (or a 500 when it failed), then releases the request. */
  async function settle(
    exchange: Exchange,
    response: Promise<PlainResponse>,
    ops: boolean,
    deferContinue: boolean,
  ): Promise<void> {
    const { req } = exchange;
    try {
      let plain: PlainResponse;
      try {
        plain = await response;
      } catch (error) {
        const id = incomingRequestId(req) ?? nextOpsId();
        logError?.(error, id);
        exchange.answer(internalError(id), true);
        return;
      }
      const unread = ops
        ? hasBody(req) && !req.complete
        : mustClose(req, exchange.body, deferContinue, drainLimit);
      // While crowded, answers that need no key do not keep a connection for free.
      const shed = connections?.crowded === true && (ops || plain.status === 401 || plain.status === 429);
      exchange.answer(plain, draining || exchange.closeAfter || unread || shed);
    } catch {
      // Writing failed (the response is destroyed or closed): nothing more can be sent.
    } finally {
      exchange.release();
    }
  }

  /** `/healthz` and `/readyz`; `HEAD` gets the headers of `GET`, Content-Length included. */
  async function answerOps(path: string, method: string, requestId: string): Promise<PlainResponse> {
    if (method !== "GET" && method !== "HEAD") {
      // Refused like any other method a route does not take (CONTRACT §6): problem+json with Allow.
      const problem = new ApiError("method_not_allowed", `${path} answers GET and HEAD only`, {
        headers: { allow: "GET, HEAD" },
      });
      return problemResponse(problem, requestId);
    }
    const headers: Record<string, string> = { ...OPS_HEADERS, "x-request-id": requestId };
    let status = 200;
    let body = '{"status":"ok"}';
    if (path === "/readyz") {
      // Fails only on this instance's own state (draining, closed, its own checks); the shared
      // stores are reported, and one that is down makes the answer "degraded", still 200.
      let ready = !draining;
      if (ready && api.ready !== undefined) ready = await api.ready().catch(() => false);
      const stores = ready ? await checkStores(api.readinessChecks) : undefined;
      const instance = ready ? checkInstance(api.instanceChecks) : undefined;
      if (instance !== undefined && Object.values(instance).some((s) => s !== "ok")) ready = false;
      status = ready ? 200 : 503;
      // Every 503 says when to ask again (CONTRACT §6): the checks are retried at once, so 1 s.
      if (!ready) headers["retry-after"] = "1";
      const degraded = stores !== undefined && Object.values(stores).some((s) => s !== "ok");
      const state = ready ? (degraded ? "degraded" : "ready") : draining ? "draining" : "not_ready";
      body = JSON.stringify({
        status: state,
        ...(stores === undefined ? {} : { stores }),
        ...(instance === undefined ? {} : { instance }),
      });
    }
    const route = path === "/readyz" ? "GET /readyz" : "GET /healthz";
    if (method !== "HEAD") return { status, headers, body, route };
    const length = String(Buffer.byteLength(body));
    return { status, headers: { ...headers, "content-length": length }, body: null, route };
  }

  function clientError(error: NodeJS.ErrnoException, socket: Duplex): void {
    const active = (socket as Duplex & { [CURRENT]?: ActiveRequest | undefined })[CURRENT];
    if (active !== undefined && !active.res.headersSent) {
      const bodyArriving = !active.req.complete;
      if (error.code === "ERR_HTTP_REQUEST_TIMEOUT" && bodyArriving) {
        // Answered here, not by the core (which would say 400): the handler still runs to its end,
        // its reader rejected so it does not wait, and its answer is dropped.
        active.refuse(new ApiError("request_timeout", "the request body was not received in time"));
        truncateBody(active.body, "the request timed out");
        return;
      }
      if (error.code?.startsWith(PARSE_ERROR) === true || error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
        // Node's parser delivers nothing more on this connection: end the body here (the core
        // answers 400 invalid_body), or answer a complete request; then close.
        if (bodyArriving) truncateBody(active.body, parserFault(error));
        active.closeAfter = true;
        failed.add(socket);
        return;
      }
    }
    // A failed parser reports its error again for every later packet; the request it followed is
    // (being) answered with Connection: close, which a refusal written now would corrupt or cut.
    if (failed.has(socket)) return;
    refuseConnection(error, socket, active?.res.headersSent === true, nextOpsId());
  }

  function connect(req: IncomingMessage, socket: Duplex): void {
    const started = performance.now();
    const requestId = incomingRequestId(req) ?? nextOpsId();
    const problem = new ApiError(
      "method_not_allowed",
      "CONNECT is not supported: this server is not a proxy",
      {
        headers: { allow: ANY_ROUTE_METHODS },
      },
    );
    socket.on("error", () => undefined);
    socket.resume();
    socket.end(rawResponse(problemResponse(problem, requestId)), () => socket.destroy());
    log?.(
      entry(
        {
          method: "CONNECT",
          path: req.url ?? "",
          status: problem.status,
          requestId,
          started,
          outcome: { errorCode: problem.code },
          clientAddress: (socket as Partial<Socket>).remoteAddress,
          body: undefined,
          req: undefined,
          bytesOut: 0,
        },
        false,
      ),
    );
  }

  const listener = ((req: IncomingMessage, res: ServerResponse) => serve(req, res, false)) as PartnerListener;
  Object.defineProperties(listener, {
    checkContinue: { value: (req: IncomingMessage, res: ServerResponse) => serve(req, res, true) },
    clientError: { value: clientError },
    checkExpectation: { value: (req: IncomingMessage, res: ServerResponse) => serve(req, res, false) },
    connect: { value: connect },
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
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly body: BodyState;
  /** A protocol error followed this request: answer it, then close the connection. */
  closeAfter: boolean;
  /** Answers the request with this problem now (and closes the connection); the handler's answer is dropped. */
  refuse(error: ApiError): void;
}

/**
 * Answers a connection node:http gave up on (no request to answer through) with a complete
 * problem+json response, as the core would answer (CONTRACT §6, §9), then closes it. When a
 * response has already begun on it, the connection is only closed.
 */
function refuseConnection(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  responseStarted: boolean,
  requestId: string,
): void {
  if (socket.writable && !responseStarted) {
    socket.write(rawResponse(problemResponse(clientErrorProblem(error), requestId)));
  }
  socket.destroy(error);
}

/**
 * The parser's fixed description of what it refused (never the client's bytes), or undefined for
 * an end of stream (the body is then described as short of its length, or of its last chunk).
 */
function parserFault(error: NodeJS.ErrnoException & { reason?: unknown }): string | undefined {
  if (error.code === "HPE_INVALID_EOF_STATE") return undefined;
  return typeof error.reason === "string" && error.reason !== ""
    ? error.reason
    : (error.code ?? "parse error");
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

/**
 * One `writeHead`, one `end`; Content-Length set here (a HEAD answer brings its own). Returns the
 * bytes of the body written.
 */
function write(res: ServerResponse, method: string, plain: PlainResponse, close: boolean): number {
  if (res.headersSent || res.destroyed) return 0;
  const headers: OutgoingHttpHeaders = { ...plain.headers };
  const length = plain.body === null ? 0 : Buffer.byteLength(plain.body);
  if (plain.body !== null) headers["content-length"] = length;
  else if (method !== "HEAD") headers["content-length"] = 0;
  if (close) headers["connection"] = "close";
  try {
    res.writeHead(plain.status, headers);
  } catch {
    // A header value node refuses (only a wrapped handler could produce one): answer 500 instead.
    const fallback = internalError(plain.headers["x-request-id"] ?? "");
    res.writeHead(fallback.status, {
      ...fallback.headers,
      "content-length": Buffer.byteLength(fallback.body),
      connection: "close",
    });
    res.end(fallback.body);
    return Buffer.byteLength(fallback.body);
  }
  res.end(plain.body ?? undefined);
  return length;
}

/** The adapter's own endpoints, not logged unless `logHealthChecks`. */
function isOps(path: string): boolean {
  return path === "/healthz" || path === "/readyz";
}

/** What a request's log line is made of (an `Exchange`, or the refusal of a `CONNECT`). */
interface Logged {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly requestId: string;
  readonly started: number;
  readonly outcome: Pick<PlainResponse, "route" | "errorCode" | "partnerId" | "keyId"> | undefined;
  readonly clientAddress: string | undefined;
  readonly body: BodyState | undefined;
  readonly req: IncomingMessage | undefined;
  readonly bytesOut: number;
}

/** Every field present (undefined when absent: JSON leaves it out), so every entry has one shape. */
function entry(x: Logged, aborted: boolean): RequestLogEntry {
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

/** Request ids for the adapter's own endpoints, in the core's shape: `req_` + 12 hex + counter. */
function opsRequestIdGenerator(): () => string {
  const prefix = `req_${randomBytes(6).toString("hex")}`;
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36).padStart(6, "0")}`;
}

/** This instance's own checks for `/readyz`: "ok" or a state (a check that throws: "failed"). */
function checkInstance(
  checks: Readonly<Record<string, () => string>> | undefined,
): Record<string, string> | undefined {
  if (checks === undefined || Object.keys(checks).length === 0) return undefined;
  const states: Record<string, string> = {};
  for (const [name, check] of Object.entries(checks)) {
    try {
      states[name] = check();
    } catch {
      states[name] = "failed";
    }
  }
  return states;
}

/**
 * Each store's state for `/readyz`: "ok" or "unavailable". The reason stays out of the answer,
 * which needs no key: it would name internal hosts and ports.
 */
async function checkStores(
  checks: Readonly<Record<string, () => Promise<void>>> | undefined,
): Promise<Record<string, string> | undefined> {
  if (checks === undefined) return undefined;
  const names = Object.keys(checks);
  const results = await Promise.all(
    names.map(async (name) => {
      try {
        return (await settlesWithin(checks[name]!(), READINESS_CHECK_MS)) ? "ok" : "unavailable";
      } catch {
        return "unavailable";
      }
    }),
  );
  return Object.fromEntries(names.map((name, i) => [name, results[i]!]));
}
