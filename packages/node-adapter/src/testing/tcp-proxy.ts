/**
 * A TCP proxy in front of PostgreSQL or Redis that a test can cut, so an outage is
 * simulated without stopping the shared server. `refuse` resets every connection and every new
 * one (a server that is down); `blackhole` keeps connections open but forwards nothing (a network
 * that drops packets: only timeouts notice).
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export type ProxyMode = "forward" | "refuse" | "blackhole";

export interface TcpProxy {
  readonly port: number;
  /** Stops forwarding: `refuse` or `blackhole` (see the module comment). */
  cut(mode: Exclude<ProxyMode, "forward">): void;
  /** Forwards again; connections held by a black hole are reset. */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let mode: ProxyMode = "forward";
  const pairs = new Set<{ client: Socket; upstream: Socket | undefined }>();
  const held = new Set<Socket>();

  const server: Server = createServer((client) => {
    client.on("error", () => undefined);
    if (mode === "refuse") {
      client.resetAndDestroy();
      return;
    }
    if (mode === "blackhole") {
      held.add(client);
      client.on("close", () => held.delete(client));
      return;
    }
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    upstream.on("error", () => client.destroy());
    client.on("close", () => {
      upstream.destroy();
      pairs.delete(pair);
    });
    upstream.on("close", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;

  const proxy: TcpProxy = {
    port,
    cut(next) {
      mode = next;
      for (const pair of pairs) {
        if (next === "refuse") {
          pair.client.resetAndDestroy();
          pair.upstream?.destroy();
        } else {
          // Stop both directions; the sockets stay open and silent.
          pair.client.unpipe();
          pair.upstream?.unpipe();
          pair.client.pause();
          pair.upstream?.pause();
          held.add(pair.client);
          if (pair.upstream !== undefined) held.add(pair.upstream);
        }
      }
      pairs.clear();
    },
    restore() {
      mode = "forward";
      for (const socket of held) socket.resetAndDestroy();
      held.clear();
    },
    async close() {
      proxy.restore();
      for (const pair of pairs) pair.client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
