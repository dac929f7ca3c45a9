/**
 * What node:http reports on a connection rather than through a request: parse errors and
 * timeouts (`clientError`) and `CONNECT`. Each is answered in the core's problem+json shape
 * (CONTRACT §6, §9) and the connection closes.
 * @module
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { ApiError } from "@partner-yield/core";
import { incomingRequestId } from "./plain-request.js";
import { ANY_ROUTE_METHODS, clientErrorProblem, problemResponse, rawResponse } from "./refusal.js";
import { truncateBody } from "./request-body.js";
import { nextRequestId } from "./request-id.js";
import type { RequestLogEntry } from "./request-log.js";
import { type LoggedExchange, requestLogEntry } from "./request-log-entry.js";
import { currentRequest } from "./request-tracking.js";

/** The code prefix of node's HTTP parser errors (llhttp), e.g. `HPE_INVALID_CHUNK_SIZE`. */
const PARSE_ERROR = "HPE_";

/** Connections whose parser failed during a request that is still answered (it closes them after). */
const failed = new WeakSet<Duplex>();

/**
 * For `server.on("clientError", …)`. While a request's body is arriving, a parse error ends the
 * body there (the core answers `400 invalid_body`) and the request timeout answers
 * `408 request_timeout`; a parse error after a complete request lets that request be answered.
 * Anything else is refused with a problem+json 400, 408 or 431 written to the socket.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const active = currentRequest(socket);
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
  refuseConnection(error, socket, active?.res.headersSent === true, nextRequestId());
}

/**
 * For `server.on("connect", …)`: `405 method_not_allowed` (this server is not a proxy) with
 * `Allow`, then the connection closes; logged to `log` like a request.
 */
export function refuseConnect(
  req: IncomingMessage,
  socket: Duplex,
  log: ((entry: RequestLogEntry) => void) | undefined,
): void {
  const started = performance.now();
  const requestId = incomingRequestId(req) ?? nextRequestId();
  const problem = new ApiError("method_not_allowed", "CONNECT is not supported: this server is not a proxy", {
    headers: { allow: ANY_ROUTE_METHODS },
  });
  socket.on("error", () => undefined);
  socket.resume();
  socket.end(rawResponse(problemResponse(problem, requestId)), () => socket.destroy());
  if (log === undefined) return;
  const refused: LoggedExchange = {
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
  };
  log(requestLogEntry(refused, false));
}

/**
 * Answers a connection node:http gave up on (no request to answer through) with a complete
 * problem+json response, as the core would answer, then closes it. When a response has already
 * begun on it, the connection is only closed.
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
