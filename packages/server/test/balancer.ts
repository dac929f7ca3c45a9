/**
 * Test support: a tiny loopback TCP load balancer, as a rolling restart meets it. It polls each
 * backend's `/readyz` (every `pollMs`; `startBalancer` returns once every initial backend has
 * answered 200), sends each new client connection to the next ready backend (round robin), and
 * tries the next one when a connect is refused (no byte has been sent then, so this is no retry
 * of a request). A connection stays with its backend until either side closes
 * it. Backends can be replaced while it runs (`setBackends`), as a rolling restart does.
 * Also `keepAliveLoad`: workers sending requests over keep-alive connections, never retrying.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { Agent, request } from "undici";

export interface Backend {
  readonly host: string;
  readonly port: number;
}

export interface Balancer {
  readonly url: string;
  setBackends(backends: readonly Backend[]): void;
  /** Connections handed to each backend (`host:port`), since the start. */
  readonly routed: ReadonlyMap<string, number>;
  /**
   * Resolves once each of `backends` has been handed a connection; rejects after `timeoutMs`
   * (the counts in the message), so a test waiting for it fails instead of hanging.
   */
  waitForRouted(backends: readonly Backend[], timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const name = (b: Backend) => `${b.host}:${b.port}`;

export async function startBalancer(initial: readonly Backend[], pollMs = 50): Promise<Balancer> {
  let backends = [...initial];
  const ready = new Set<string>();
  const routed = new Map<string, number>();
  const sockets = new Set<Socket>();
  let next = 0;
  let closed = false;

  const pollOnce = () =>
    Promise.all(
      backends.map(async (b) => {
        try {
          const res = await fetch(`http://${name(b)}/readyz`, { signal: AbortSignal.timeout(1000) });
          await res.arrayBuffer();
          if (res.status === 200) ready.add(name(b));
          else ready.delete(name(b));
        } catch {
          ready.delete(name(b));
        }
      }),
    );
  // Every backend given at the start is ready before the balancer takes connections: connections
  // made while only some had answered would all go to those, and keep-alive would keep them there.
  const deadline = Date.now() + 10_000;
  for (await pollOnce(); ready.size < new Set(initial.map(name)).size; await pollOnce()) {
    if (Date.now() > deadline)
      throw new Error(
        `startBalancer: not every backend answered /readyz 200 within 10 s (ready: ${JSON.stringify([...ready])})`,
      );
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  const polling = (async () => {
    while (!closed) {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      if (!closed) await pollOnce();
    }
  })();

  /** Connects to a ready backend, trying each at most once; undefined when none accepts. */
  const upstreamFor = async (): Promise<Socket | undefined> => {
    const candidates = backends.filter((b) => ready.has(name(b)));
    for (let i = 0; i < candidates.length; i++) {
      const b = candidates[(next + i) % candidates.length]!;
      const socket = await new Promise<Socket | undefined>((resolve) => {
        const s = connect(b.port, b.host);
        s.once("connect", () => resolve(s));
        s.once("error", () => {
          ready.delete(name(b));
          resolve(undefined);
        });
      });
      if (socket !== undefined) {
        next = (next + i + 1) % Math.max(1, candidates.length);
        routed.set(name(b), (routed.get(name(b)) ?? 0) + 1);
        return socket;
      }
    }
    return undefined;
  };

  const server: Server = createServer({ pauseOnConnect: true }, async (client) => {
    client.on("error", () => undefined);
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    let upstream: Socket | undefined;
    // No backend ready (all restarting at once): wait for one, as a balancer queues a connection.
    for (let attempt = 0; attempt < 100 && upstream === undefined && !client.destroyed; attempt++) {
      upstream = await upstreamFor();
      if (upstream === undefined) await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    if (upstream === undefined) {
      client.destroy();
      return;
    }
    sockets.add(upstream);
    upstream.once("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream).pipe(client);
    client.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;

  return {
    url: `http://127.0.0.1:${port}`,
    routed,
    async waitForRouted(wanted, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (wanted.some((b) => (routed.get(name(b)) ?? 0) === 0)) {
        if (Date.now() > deadline)
          throw new Error(
            `the balancer handed no connection to ${wanted
              .filter((b) => (routed.get(name(b)) ?? 0) === 0)
              .map(name)
              .join(
                ", ",
              )} within ${timeoutMs} ms (routed: ${JSON.stringify([...routed])}; ready: ${JSON.stringify([...ready])})`,
          );
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    setBackends(list) {
      backends = [...list];
      for (const n of [...ready]) if (!backends.some((b) => name(b) === n)) ready.delete(n);
    },
    async close() {
      closed = true;
      await polling;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface LoadResult {
  /** Requests answered, by status. */
  readonly statuses: ReadonlyMap<number, number>;
  /** Requests that got no answer (a reset, a refused connection), with their messages. */
  readonly errors: readonly string[];
  readonly total: number;
}

/**
 * `workers` loops, each sending `request()` one after the other over a keep-alive agent (at most
 * `workers` connections, no pipelining, no retry), until `stop()` resolves, and at most
 * `maxPerWorker` each. Every request is counted once, as answered (by status) or failed.
 */
export async function keepAliveLoad(options: {
  readonly url: string;
  readonly workers: number;
  readonly maxPerWorker: number;
  readonly until: Promise<unknown>;
  readonly send: (
    url: string,
    dispatcher: Agent,
    worker: number,
    i: number,
  ) => Promise<{ status: number; text: string }>;
}): Promise<LoadResult> {
  const agent = new Agent({ connections: options.workers, pipelining: 1, keepAliveTimeout: 30_000 });
  const statuses = new Map<number, number>();
  const errors: string[] = [];
  let stopped = false;
  void options.until.finally(() => {
    stopped = true;
  });
  let total = 0;
  await Promise.all(
    Array.from({ length: options.workers }, async (_, w) => {
      for (let i = 0; i < options.maxPerWorker && !stopped; i++) {
        total++;
        try {
          const { status, text } = await options.send(options.url, agent, w, i);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status >= 300 && errors.length < 10) errors.push(`${status}: ${text.slice(0, 200)}`);
        } catch (error) {
          errors.push(String((error as Error).cause ?? error));
        }
      }
    }),
  );
  await agent.close();
  return { statuses, errors, total };
}

/** `GET path` with `headers` through `dispatcher` (no retry). */
export async function getThrough(
  url: string,
  dispatcher: Agent,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const res = await request(url, { dispatcher, headers });
  return { status: res.statusCode, text: await res.body.text() };
}
