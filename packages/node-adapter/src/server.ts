/**
 * A real node:http server around the API: explicit timeouts, keep-alive, and a graceful, bounded
 * shutdown that never closes the stores under a request in flight.
 * @module
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createPartnerApi,
  type Environment,
  type EventStore,
  type KeyStore,
  type PartnerApi,
  type PartnerApiHandler,
  type PartnerStore,
  type PositionSource,
  type PriceSource,
  type ProductSource,
  type RateLimiter,
  type SandboxData,
} from "@partner-yield/core";
import { type ConnectionGuard, type ConnectionLimits, guardConnections } from "./connections.js";
import { DEFAULT_FIXTURES_DIR, loadFixtureDir } from "./fixture-dir.js";
import { nodeHmacSha256, nodeSha256 } from "./hmac.js";
import { type AnsweredRequest, createListener, type PartnerListener } from "./listener.js";
import { flushRequestLog, type RequestLogOption, resolveErrorLog } from "./request-log.js";
import { settlesWithin } from "./settles-within.js";

/** Server timeouts, in milliseconds. */
export interface ServerTimeouts {
  /** Time a client has to send the complete request headers; then 408 and the connection closes. */
  readonly headersTimeoutMs: number;
  /** Time a client has to send the complete request, body included. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number;
  /**
   * On shutdown, how long requests in flight may take before their connections are cut; then as
   * long again, in all, for cut handlers to settle and the stores to close (at least 1 s for the
   * stores). `close()` settles within about twice this; it rejects when the stores did not close.
   */
  readonly shutdownTimeoutMs: number;
}

/**
 * - headers 10 s: a real client sends its headers (< 16 KiB) in one round trip; a slowloris
 *   client that trickles them is cut off after 10 s instead of node's 60 s.
 * - request 30 s: the largest body (64 KiB by default) arrives in well under a second on any
 *   working link; 30 s still lets a very slow mobile link finish, and bounds slow-body attacks.
 * - keep-alive 65 s: longer than a load balancer's idle timeout (AWS ALB: 60 s), so the balancer
 *   (or a client honouring `Keep-Alive: timeout=65`) closes first and never sends a request into a
 *   connection the server is closing; a POST lost that way is a needless retry.
 * - shutdown 10 s: requests take milliseconds; 10 s covers a slow store, and twice that (the
 *   bound of the whole shutdown, stores closed) stays inside a typical 30 s termination grace
 *   period (Kubernetes).
 */
export const DEFAULT_TIMEOUTS: ServerTimeouts = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  shutdownTimeoutMs: 10_000,
});

export interface NodeApiOptions {
  readonly environment?: Environment | undefined;
  /** Validated fixtures; default: loaded from `fixturesDir`. */
  readonly data?: SandboxData | undefined;
  /** Default: the repository's `fixtures/`. */
  readonly fixturesDir?: string | undefined;
  /** Maximum event body in bytes; default 65536. */
  readonly bodyLimitBytes?: number | undefined;
  /** Overrides every partner's per-minute quota (QA and load runs); the limiter still runs. */
  readonly rateLimitQuota?: number | undefined;
  /** Leading bits of an IPv6 client address counted as one in the failed-auth limit; default 64. */
  readonly ipv6PrefixLength?: number | undefined;
  /** Default: the fixtures' products (e.g. `ChainMetricsProductSource` for metrics from chain). */
  readonly products?: ProductSource | undefined;
  /** Default: the fixtures' vault states (e.g. `EvmPositionSource` for positions from chain). */
  readonly positions?: PositionSource | undefined;
  /** Default: the fixtures' prices (e.g. `TablePriceSource` for prices with an age limit). */
  readonly prices?: PriceSource | undefined;
  /** Default: a new in-memory event store. */
  readonly events?: EventStore | undefined;
  /** Default: a new in-memory rate limiter. */
  readonly rateLimiter?: RateLimiter | undefined;
  /** Default: the fixtures' (the fixtures are not read when keys, partners, products, positions and prices are all given). */
  readonly keys?: KeyStore | undefined;
  readonly partners?: PartnerStore | undefined;
  /** Where the API lives; default `/api/partner` (see the core's `basePath`). */
  readonly basePath?: string | undefined;
  /**
   * Logging. The API logs every 5xx with its cause: one JSON line with level "error", msg
   * "unexpected_error" (500) or "service_unavailable" (503: a store down, a missing USD price), the
   * request id, the status and the error's name, message, stack and cause, never the request's
   * headers or body; on stderr for `"json"` (default), to the function, or not at all for `"none"`.
   * The server adds the request log (see `StartServerOptions.log`).
   */
  readonly log?: RequestLogOption | undefined;
  /**
   * Hears every `StoreUnavailableError` a request met (answered 503), also with `log: "none"`:
   * e.g. a store watch's `suspect` (store-watch.ts), which logs a store going down and coming back.
   */
  readonly onStoreError?: ((error: Error) => void) | undefined;
}

/**
 * The API on the embedded defaults (fixtures, in-memory stores) with node:crypto HMAC and SHA-256.
 * @example const api = createNodePartnerApi({ environment: "sandbox", rateLimitQuota: 10_000 });
 */
export function createNodePartnerApi(options: NodeApiOptions = {}): PartnerApi {
  const given = [options.keys, options.partners, options.products, options.positions, options.prices];
  const data = given.every((port) => port !== undefined)
    ? undefined
    : (options.data ?? loadFixtureDir(options.fixturesDir ?? DEFAULT_FIXTURES_DIR));
  const ports = {
    partners: options.partners ?? data!.partners,
    keys: options.keys ?? data!.keys,
    products: options.products ?? data!.products,
    positions: options.positions ?? data!.positions,
    prices: options.prices ?? data!.prices,
    events: options.events,
    rateLimiter: options.rateLimiter,
  };
  return createPartnerApi({
    environment: options.environment ?? "sandbox",
    ...ports,
    hmac: nodeHmacSha256,
    sha256: nodeSha256,
    bodyLimitBytes: options.bodyLimitBytes,
    rateLimitOverride: options.rateLimitQuota,
    ipv6PrefixLength: options.ipv6PrefixLength,
    basePath: options.basePath,
    onError: resolveErrorLog(options.log, options.onStoreError),
  });
}

export interface StartServerOptions extends NodeApiOptions {
  /** Default 127.0.0.1. */
  readonly host?: string | undefined;
  /** Default 8787; 0 picks a free port (see `RunningServer.port`). */
  readonly port?: number | undefined;
  /**
   * A pre-built API (then the options of `NodeApiOptions` are not used, except `bodyLimitBytes` as
   * the drain bound of unread bodies); default `createNodePartnerApi(options)`. `close()` closes it.
   */
  readonly api?: PartnerApi | undefined;
  /** Serve this handler instead of `api.handle` (readiness and shutdown still use `api`). */
  readonly handler?: PartnerApiHandler | undefined;
  /** Or derive the handler from the API, e.g. to inject faults: `wrap: (api) => ({ handle: … })`. */
  readonly wrap?: ((api: PartnerApi) => PartnerApiHandler) | undefined;
  readonly timeouts?: Partial<ServerTimeouts> | undefined;
  /**
   * Caps on open connections, in all and per client address, and the shorter idle time while the
   * server is crowded (see `ConnectionLimits` for the defaults).
   */
  readonly connections?: ConnectionLimits | undefined;
  /**
   * On `close()`, how long `/readyz` answers 503 (draining) while the server still accepts and
   * serves, before it stops accepting: the time a load balancer takes to see the 503 and send
   * new connections elsewhere. Default 0 (`partner-yield serve`: `--drain-delay`, 5000).
   */
  readonly drainDelayMs?: number | undefined;
  /** Log `/healthz` and `/readyz` requests too (default false). */
  readonly logHealthChecks?: boolean | undefined;
  /** Called once per request when it is done, with its outcome (the server's metrics hook). */
  readonly requestDone?: ((request: AnsweredRequest) => void) | undefined;
  /** Named store checks reported by `/readyz` (see `ListenerTarget.readinessChecks`). */
  readonly readinessChecks?: Readonly<Record<string, () => Promise<void>>> | undefined;
  /** This instance's own checks, which fail `/readyz` (see `ListenerTarget.instanceChecks`). */
  readonly instanceChecks?: Readonly<Record<string, () => string>> | undefined;
  /**
   * Request log: `"json"` lines on stdout (default), `"none"`, or a function; unexpected errors go
   * to stderr (or the function) as in `NodeApiOptions.log`. A pre-built `api` logs its own errors
   * as it was created to; errors of a `handler` or `wrap` that throws are logged here.
   */
  readonly log?: RequestLogOption | undefined;
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  readonly url: string;
  readonly host: string;
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  readonly server: Server;
  readonly api: PartnerApi;
  readonly listener: PartnerListener;
  /** Open, refused and evicted connections (see `ConnectionGuard`). */
  readonly connections: ConnectionGuard;
  /**
   * Graceful shutdown: answer `/readyz` 503 and ask every client to close its connection, keep
   * accepting and serving for `drainDelayMs`, then stop accepting, let requests in flight finish (at most
   * `shutdownTimeoutMs`, then their connections are cut), wait for their handlers, close the stores
   * (those two steps together at most `shutdownTimeoutMs` again, the stores at least 1 s). Rejects
   * when the stores did not close in that time, or failed to. Idempotent: later calls return the
   * same promise.
   */
  close(): Promise<void>;
}

/**
 * Starts the API on node:http.
 *
 * @example
 * const server = await startServer({ port: 0, log: "none" });
 * const res = await fetch(`${server.url}/api/partner/products`, { headers: { "x-api-key": key } });
 * await server.close();
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  validateTimeouts(timeouts);
  const drainDelayMs = options.drainDelayMs ?? 0;
  if (!Number.isInteger(drainDelayMs) || drainDelayMs < 0)
    throw new RangeError("drainDelayMs must be a non-negative integer (milliseconds)");
  const api = options.api ?? createNodePartnerApi(options);
  const handler = options.handler ?? options.wrap?.(api) ?? api;
  const target =
    handler === api && options.readinessChecks === undefined && options.instanceChecks === undefined
      ? api
      : {
          handle: (req: Parameters<PartnerApiHandler["handle"]>[0]) => handler.handle(req),
          ready: () => api.ready(),
          readinessChecks: options.readinessChecks,
          instanceChecks: options.instanceChecks,
        };
  const server = createServer({
    // Answered by the listener, in problem+json and logged, instead of node's bare 400.
    requireHostHeader: false,
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    // How often node looks for connections past headersTimeout / requestTimeout (default 30 s,
    // which would let a slow-headers client hold a socket up to 40 s).
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4))),
  });
  // A client that half-closes after its request (writes it, then shuts down its sending side, as
  // `nc -N` or a raw socket's `end(bytes)` does) still gets the answer: node's default aborts the
  // requests in flight when the client's FIN arrives before they are answered, and the listener
  // answers a turn after the request (and a body is read first). With this, node marks the last
  // answer as the connection's last instead and closes once it is written.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const connections = guardConnections(server, options.connections);
  const listener = createListener(target, {
    log: options.log,
    drainLimitBytes: options.bodyLimitBytes,
    connections,
    logHealthChecks: options.logHealthChecks,
    requestDone: options.requestDone,
  });
  server.on("request", listener);
  server.on("checkExpectation", listener.checkExpectation);
  server.on("checkContinue", listener.checkContinue);
  server.on("clientError", listener.clientError);
  server.on("connect", listener.connect);

  const host = options.host ?? "127.0.0.1";
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 8787, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    connections.stop();
    await api.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const limit = timeouts.shutdownTimeoutMs;
      // Not ready at once (a load balancer stops sending new connections here), but still
      // accepting and serving, each answer with Connection: close, until it has had time to see it.
      listener.drain();
      if (drainDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if (!(await listener.whenIdle(limit))) server.closeAllConnections();
      // Keep-alive connections idle by now; in-flight ones were answered with Connection: close.
      server.closeIdleConnections();
      // One more `limit` in all for what is left: handlers still running after a cut (awaited, so
      // no store closes under one), the connections, the stores (at least STORE_CLOSE_MIN_MS).
      const deadline = Date.now() + limit;
      const left = () => Math.max(0, deadline - Date.now());
      await listener.whenIdle(left());
      await Promise.race([closed, delay(left())]);
      server.closeAllConnections();
      connections.stop();
      const storeWait = Math.max(left(), STORE_CLOSE_MIN_MS);
      const storesClosed = await settlesWithin(api.close(), storeWait);
      // The request lines still buffered (request-log.ts writes every 10 ms) are written before
      // close() settles.
      flushRequestLog();
      if (!storesClosed) {
        throw new Error(
          `the stores did not close within ${storeWait} ms (a connection pool waiting for a query?)`,
        );
      }
    })();
    return closing;
  };

  return { url: `http://${urlHost(host)}:${port}`, host, port, server, api, listener, connections, close };
}

function validateTimeouts(t: ServerTimeouts): void {
  for (const [name, value] of Object.entries(t)) {
    if (!Number.isInteger(value) || value <= 0)
      throw new RangeError(`${name} must be a positive integer (milliseconds)`);
  }
  if (t.headersTimeoutMs > t.requestTimeoutMs) {
    throw new RangeError(
      "headersTimeoutMs must not exceed requestTimeoutMs (the headers are part of the request)",
    );
  }
}

/** The host as it goes in a URL a user can open: wildcard addresses become loopback. */
function urlHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/** The least time the stores are given to close at shutdown, however long the requests took. */
const STORE_CLOSE_MIN_MS = 1000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
