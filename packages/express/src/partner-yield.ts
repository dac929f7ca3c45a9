/**
 * The Express 5 middleware: mounted with `app.use(path, partnerYield({ api }))`, it answers every
 * request Express routes to it under the API's base path, the bare path included, with one
 * `writeHead` and one `end`, and passes everything else on with `next()`. It reads the body itself
 * and must come before any body parser on its path.
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PartnerApi, PartnerApiHandler, PlainResponse } from "@partner-yield/core";
import { answerFromCore, splitTarget } from "@partner-yield/node-adapter";

/** The API to mount: a `PartnerApi`, or any handler that says where it answers. */
export type MountedApi = Pick<PartnerApi, "handle" | "basePath">;

/** What the middleware reads of Express's request (Express 5's `Request` has all of it). */
export interface MountedRequest extends IncomingMessage {
  /** The target as received; Express rewrites `url` below a mount path. */
  readonly originalUrl: string;
  /** The path Express matched the mount on (`""` at the root). */
  readonly baseUrl: string;
  /** The client's address, as Express's `trust proxy` setting reads it. */
  readonly ip?: string | undefined;
}

export interface PartnerYieldOptions {
  /** The API (`createPartnerApi`). Its `basePath` is where it answers: mount the middleware there. */
  readonly api: MountedApi;
  /**
   * The client's address, for the failed-authentication limit (CONTRACT §4). Default `req.ip`: the
   * socket's peer, or with `app.set("trust proxy", …)` the address your proxy reports.
   */
  readonly clientAddress?: ((req: MountedRequest) => string | undefined) | undefined;
  /**
   * An id a middleware before this one gave the request (pino-http's `req.id`): the answer's
   * `X-Request-Id` when the client sent no acceptable one (CONTRACT §9). Default none: the core
   * makes one.
   */
  readonly requestId?: ((req: MountedRequest) => string | undefined) | undefined;
  /**
   * Told of every request answered `500 internal_error` here, and why: a body parser read the body
   * first (`BodyAlreadyReadError`), the API mounted where it does not answer, a handler that
   * rejected. Default: one JSON line on stderr.
   */
  readonly onError?: ((error: unknown, requestId: string) => void) | undefined;
}

/** An Express middleware (Express's `RequestHandler` takes it). */
export type PartnerYieldMiddleware = (
  req: MountedRequest,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => Promise<void>;

/**
 * The middleware for `api`.
 *
 * @example
 * const api = createPartnerApi({ environment: "sandbox", ...data, basePath: "/yield/v1" });
 * const app = express();
 * app.use("/yield/v1", partnerYield({ api })); // before any body parser that would run on its path
 * app.use(express.json());                     // your routes' parser
 */
export function partnerYield(options: PartnerYieldOptions): PartnerYieldMiddleware {
  const { api } = options;
  const basePath = api.basePath;
  const onError = options.onError ?? logError;
  const clientAddress = options.clientAddress ?? ((req: MountedRequest) => req.ip);
  return async (req, res, next) => {
    const { path } = splitTarget(req.originalUrl);
    let handler: PartnerApiHandler = api;
    if (!under(path, basePath)) {
      // Express matches mount paths regardless of case: what it routed here under another case of
      // the base path is the core's to answer (404, as the node listener answers it).
      const ours = under(path.toLowerCase(), basePath.toLowerCase());
      if (!ours && under(basePath.toLowerCase(), req.baseUrl.toLowerCase())) {
        next(); // mounted at the root, or at a leading part of the base path: not the API's request
        return;
      }
      // Mounted where the API does not answer: every request there is a 500 told to onError.
      if (!ours) handler = { handle: () => Promise.reject(new Error(misplaced(req.baseUrl, basePath))) };
    }
    const { response, close } = await answerFromCore(handler, req, {
      target: req.originalUrl,
      clientAddress: clientAddress(req),
      requestId: options.requestId?.(req),
      onError,
    });
    write(res, response, close);
  };
}

/** True when `path` is `base` or below it. */
function under(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`) || base === "";
}

function misplaced(mount: string, basePath: string): string {
  return (
    `@partner-yield/express: the API answers under ${JSON.stringify(basePath)} but is mounted at ` +
    `${JSON.stringify(mount)}: build it with createPartnerApi({ basePath: ${JSON.stringify(mount)}, … }) ` +
    `or mount it with app.use(${JSON.stringify(basePath)}, partnerYield({ api }))`
  );
}

/** One `writeHead` with Content-Length, one `end`; nothing when a response has begun already. */
function write(res: ServerResponse, response: PlainResponse, close: boolean): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { ...response.headers };
  if (response.body !== null) headers["content-length"] = String(Buffer.byteLength(response.body));
  if (close) headers["connection"] = "close";
  res.writeHead(response.status, headers).end(response.body ?? undefined);
}

function logError(error: unknown, requestId: string): void {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: "error", msg: "partner-yield: answered 500", request_id: requestId, error: message })}\n`,
  );
}
