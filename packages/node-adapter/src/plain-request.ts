/**
 * The core's `PlainRequest` from a node:http `IncomingMessage`, for servers built on node:http
 * (Express, Fastify's `request.raw`, Koa's `ctx.req`, a bare `http.createServer`). The body is not
 * read here: the core reads the raw bytes, after authentication and the rate limit, with its body
 * limit (CONTRACT §5), and verifies the HMAC over exactly those bytes. So no framework body parser
 * may run first on these routes.
 * @module
 */
import type { IncomingMessage } from "node:http";
import type { PlainRequest } from "@partner-yield/core";
import { acceptableRequestId } from "@partner-yield/core/adapters";
import { createBodyReader, hasBody, newBodyState } from "./request-body.js";
import { splitTarget } from "./request-target.js";

export interface PlainRequestOptions {
  /**
   * The client's address, for the failed-authentication limit (CONTRACT §4). Default: the
   * socket's peer, `req.socket.remoteAddress`. Behind a proxy, pass the address the proxy reports
   * (Express `req.ip` with `trust proxy`, Fastify `request.ip` with `trustProxy`).
   */
  readonly clientAddress?: string | undefined;
}

/**
 * @example
 * app.all("/api/partner/*rest", async (req, res) => {          // Express 5
 *   const out = await api.handle(toPlainRequest(req));
 *   res.writeHead(out.status, out.headers).end(out.body ?? undefined);
 * });
 */
export function toPlainRequest(req: IncomingMessage, options: PlainRequestOptions = {}): PlainRequest {
  const { path, query } = splitTarget(req.url ?? "/");
  return {
    method: req.method ?? "GET",
    path,
    query,
    headers: plainHeaders(req),
    body: hasBody(req) ? createBodyReader(req, newBodyState()) : undefined,
    clientAddress: options.clientAddress ?? req.socket.remoteAddress,
    requestId: incomingRequestId(req),
  };
}

/** Header names in lower case; node joins repeated headers with ", " except `set-cookie`, joined here. */
export function plainHeaders(req: IncomingMessage): Readonly<Record<string, string | undefined>> {
  const headers = req.headers;
  if (headers["set-cookie"] === undefined) return headers as Record<string, string | undefined>;
  return { ...headers, "set-cookie": headers["set-cookie"].join(", ") };
}

/**
 * A sane incoming `X-Request-Id` is used and echoed; anything else (the core's `acceptableRequestId`
 * refuses it: bad characters, too long, or like an API key or signing secret) leaves the core to
 * generate one.
 */
export function incomingRequestId(req: IncomingMessage): string | undefined {
  const id = req.headers["x-request-id"];
  return typeof id === "string" && acceptableRequestId(id) ? id : undefined;
}
