/**
 * The core behind a framework on node:http (Fastify, Express, Koa…): the request the framework
 * routed to the API goes in, the answer comes out for the framework to write through its own
 * reply, with what the node listener decides around the core (CONTRACT §5, §9): the protocol
 * refusals, the body read only when the core asks for it, and `Connection: close` when the body
 * is not read to its end (past the limit, or unread and too large or of unknown size to drain),
 * so that no connection is left holding unread bytes and the server's `close()` returns.
 * @module
 */
import type { IncomingMessage } from "node:http";
import type { PartnerApiHandler, PlainResponse } from "@partner-yield/core";
import { acceptableRequestId } from "@partner-yield/core/adapters";
import { incomingRequestId, plainHeaders } from "./plain-request.js";
import { protocolRefusal } from "./protocol-checks.js";
import { internalError, problemResponse } from "./refusal.js";
import { createBodyReader, hasBody, leftUnread, newBodyState } from "./request-body.js";
import { nextRequestId } from "./request-id.js";
import { splitTarget } from "./request-target.js";

export interface CoreAnswerOptions {
  /**
   * The request target to route, as received. Default `req.url`; Express rewrites `req.url` below
   * a mount path, so pass `req.originalUrl` there.
   */
  readonly target?: string | undefined;
  /**
   * The client's address, for the failed-authentication limit (CONTRACT §4). Default the socket's
   * peer; behind a proxy, the framework's (Fastify `request.ip` with `trustProxy`, Express `req.ip`
   * with `trust proxy`).
   */
  readonly clientAddress?: string | undefined;
  /**
   * The id the framework gave the request (Fastify's `request.id`): the answer's `X-Request-Id` when
   * the client sent no acceptable one (CONTRACT §9), if `acceptableRequestId` takes it; otherwise
   * the core generates one.
   */
  readonly requestId?: string | undefined;
  /**
   * A body the core did not read (it answered first, e.g. 401) is left to node, which discards it
   * and keeps the connection, when its Content-Length is at most this many bytes; a larger or
   * chunked one closes the connection instead of being read. Default 65536, as the listener.
   */
  readonly drainLimitBytes?: number | undefined;
  /**
   * Told of an error the core could not answer for, answered `500 internal_error`: the handler
   * rejected, or the body had already been read by someone else (a body parser ran first).
   */
  readonly onError?: ((error: unknown, requestId: string) => void) | undefined;
}

export interface CoreAnswer {
  /** What to write: status, headers (`connection: close` among them when `close`), body (null for HEAD). */
  readonly response: PlainResponse;
  /** The connection must close after this answer: the request's body is not read to its end. */
  readonly close: boolean;
}

/** Thrown to `onError` when the request's body was consumed before the core could read it. */
export class BodyAlreadyReadError extends Error {
  override readonly name = "BodyAlreadyReadError";
  constructor() {
    super(
      "the request body was read before the partner API got it (a body parser such as express.json() " +
        "ran first): the API verifies each event's signature over the exact bytes it reads itself " +
        "(CONTRACT §5); route the API's path to it before any body parser, or scope the parsers to " +
        "your own routes",
    );
  }
}

/**
 * Answers `req` with the core (or with the refusal the node listener would give), for a framework
 * to write. Never rejects: an error becomes `500 internal_error`, told to `onError`.
 *
 * @example
 * fastify.all("/yield/v1/*", async (request, reply) => {
 *   const { response } = await answerFromCore(api, request.raw, { clientAddress: request.ip });
 *   return reply.code(response.status).headers(response.headers).send(response.body);
 * });
 */
export async function answerFromCore(
  api: PartnerApiHandler,
  req: IncomingMessage,
  options: CoreAnswerOptions = {},
): Promise<CoreAnswer> {
  const given = options.requestId;
  const requestId =
    incomingRequestId(req) ?? (given !== undefined && acceptableRequestId(given) ? given : undefined);
  const refusal = protocolRefusal(req);
  if (refusal !== undefined) return closing(problemResponse(refusal, requestId ?? nextRequestId()));
  const body = hasBody(req);
  if (body && req.readableDidRead) {
    const id = requestId ?? nextRequestId();
    options.onError?.(new BodyAlreadyReadError(), id);
    return closing(internalError(id));
  }
  const state = newBodyState();
  const { path, query } = splitTarget(options.target ?? req.url ?? "/");
  let response: PlainResponse;
  try {
    response = await api.handle({
      method: req.method ?? "GET",
      path,
      query,
      headers: plainHeaders(req),
      body: body ? createBodyReader(req, state) : undefined,
      clientAddress: options.clientAddress ?? req.socket.remoteAddress,
      requestId,
    });
  } catch (error) {
    const id = requestId ?? nextRequestId();
    options.onError?.(error, id);
    return closing(internalError(id));
  }
  return leftUnread(req, state, options.drainLimitBytes ?? 65_536)
    ? closing(response)
    : { response, close: false };
}

function closing(response: PlainResponse): CoreAnswer {
  return { response: { ...response, headers: { ...response.headers, connection: "close" } }, close: true };
}
