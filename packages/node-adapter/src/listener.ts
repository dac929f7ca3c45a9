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
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { ApiError, PlainResponse } from "@partner-yield/core";
import { answerClientError, refuseConnect } from "./client-errors.js";
import { type ConnectionGuard, resetBeforeAccept } from "./connections.js";
import { InFlight } from "./in-flight.js";
import { answerOps, isOps, type ListenerTarget } from "./ops-endpoints.js";
import { incomingRequestId, plainHeaders } from "./plain-request.js";
import { protocolRefusal } from "./protocol-checks.js";
import { internalError, problemResponse } from "./refusal.js";
import { type BodyState, createBodyReader, hasBody, leftUnread, newBodyState } from "./request-body.js";
import { nextRequestId } from "./request-id.js";
import { type RequestLogOption, resolveErrorLog, resolveRequestLog } from "./request-log.js";
import { requestLogEntry } from "./request-log-entry.js";
import { splitTarget } from "./request-target.js";
import { type ActiveRequest, type Closable, releaseCurrent, track, untrack } from "./request-tracking.js";
import { writeResponse } from "./response-write.js";

export type { ListenerTarget } from "./ops-endpoints.js";

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
  const inFlight = new InFlight();
  let draining = false;
  const connections = options.connections;
  const requestDone = options.requestDone;
  const logHealth = options.logHealthChecks === true;

  /**
   * One request and its response. A class rather than closures: its methods are shared by every
   * request, so a request allocates this one object (and its promise) instead of six functions.
   */
  class Exchange implements ActiveRequest, Closable {
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
      untrack(this.req.socket, this);
      this.done();
    }

    done(): void {
      if (--this.pending > 0) return;
      inFlight.ended();
      connections?.requestEnded(this.req.socket);
      requestDone?.({
        outcome: this.outcome,
        path: this.path,
        status: this.status,
        durationMs: performance.now() - this.started,
      });
      if (log !== undefined && (logHealth || !isOps(this.path)))
        log(requestLogEntry(this, !this.res.writableFinished));
    }

    /** The one answer of this request: the first call writes (or, client gone, records) it. */
    answer(plain: PlainResponse, close: boolean): void {
      if (this.answered) return;
      this.answered = true;
      this.requestId = plain.headers["x-request-id"] ?? "";
      this.status = plain.status;
      this.outcome = plain;
      this.bytesOut = writeResponse(this.res, this.method, plain, close);
    }

    refuse(error: ApiError): void {
      this.answer(problemResponse(error, incomingRequestId(this.req) ?? nextRequestId()), true);
    }

    release(): void {
      releaseCurrent(this.req.socket, this);
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
    inFlight.started();
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
    track(socket, res, exchange);
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
        response = Promise.resolve(problemResponse(refusal, incomingRequestId(req) ?? nextRequestId()));
      } else if (ops) {
        response = answerOps(api, path, method, incomingRequestId(req) ?? nextRequestId(), draining);
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
        const id = incomingRequestId(req) ?? nextRequestId();
        logError?.(error, id);
        exchange.answer(internalError(id), true);
        return;
      }
      const unread = ops
        ? hasBody(req) && !req.complete
        : leftUnread(req, exchange.body, drainLimit, deferContinue);
      // While crowded, answers that need no key do not keep a connection for free.
      const shed = connections?.crowded === true && (ops || plain.status === 401 || plain.status === 429);
      exchange.answer(plain, draining || exchange.closeAfter || unread || shed);
    } catch {
      // Writing failed (the response is destroyed or closed): nothing more can be sent.
    } finally {
      exchange.release();
    }
  }

  const listener = ((req: IncomingMessage, res: ServerResponse) => serve(req, res, false)) as PartnerListener;
  Object.defineProperties(listener, {
    checkContinue: { value: (req: IncomingMessage, res: ServerResponse) => serve(req, res, true) },
    clientError: { value: answerClientError },
    checkExpectation: { value: (req: IncomingMessage, res: ServerResponse) => serve(req, res, false) },
    connect: { value: (req: IncomingMessage, socket: Duplex) => refuseConnect(req, socket, log) },
    inFlight: { get: () => inFlight.count },
    draining: { get: () => draining },
    drain: {
      value: () => {
        draining = true;
      },
    },
    whenIdle: { value: (timeoutMs: number) => inFlight.whenIdle(timeoutMs) },
  });
  return listener;
}
