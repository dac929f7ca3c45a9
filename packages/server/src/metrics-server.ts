/**
 * The scrape endpoint: `GET /metrics` (Prometheus text format) on a node:http server of its own,
 * on `--metrics-host` (default loopback) and `--metrics-port`, never on the partner port: the
 * series name partners and stores, which the partner-facing port does not show.
 * @module
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface MetricsServerOptions {
  readonly registry: Registry;
  /** Default 127.0.0.1: reachable by a Prometheus on the same host (or a sidecar) only. */
  readonly host?: string | undefined;
  /** 0 picks a free port (see `MetricsServer.port`). */
  readonly port: number;
}

export interface MetricsServer {
  /** E.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /** Stops accepting and closes its connections (a scrape in flight is cut). Idempotent. */
  close(): Promise<void>;
}

const TEXT_HEADERS = { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" };

/**
 * @example
 * const scrape = await startMetricsServer({ registry: metrics.registry, port: 9464 });
 * // curl http://127.0.0.1:9464/metrics
 * await scrape.close();
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { registry } = options;
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 65_000 });
  server.on("request", (req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0];
    if (path !== "/metrics") {
      res.writeHead(404, TEXT_HEADERS).end("not found: the metrics are at /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...TEXT_HEADERS, allow: "GET, HEAD" }).end("/metrics answers GET and HEAD only\n");
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, {
          "content-type": registry.contentType,
          "cache-control": "no-store",
          "content-length": Buffer.byteLength(text),
        });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (error: unknown) => {
        res.writeHead(500, TEXT_HEADERS).end(`collecting the metrics failed: ${String(error)}\n`);
      },
    );
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost =
    host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}/metrics`,
    port,
    server,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
