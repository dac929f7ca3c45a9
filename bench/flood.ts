/**
 * Connection flood (not a test): N idle keep-alive connections (one `GET /healthz` each, then
 * silence) from many loopback addresses against a `partner-yield serve` child, while a legitimate
 * client sends authenticated `GET /api/partner/products`; prints what the server held, what it
 * closed or refused, and the legitimate client's success rate and latency. Loopback only, bounded.
 *
 *   pnpm flood                                   # 20,000 connections (or what `ulimit -n` allows), 20 s
 *   pnpm flood --connections 5000 --duration 5
 *   pnpm flood --server-flags="--max-connections 2000"
 *   pnpm flood --repo /tmp/other-checkout        # serve another checkout of the repository
 *
 * The flood's own descriptors count against this process's `ulimit -n`: the connections are
 * capped at that limit less 200. Raise it first (`ulimit -n 65536`, up to the hard limit
 * `ulimit -Hn`) to flood with more; the server child inherits the same limit.
 */
import { connect, type Socket } from "node:net";
import { Pool } from "undici";
import { DEMO_CREDENTIALS as DEMO } from "../packages/core/src/demo/index.js";
import { openFilesLimit } from "../packages/node-adapter/src/connections.js";
import { intFlagOf, parseFlags } from "./cli-flags.js";
import { openFds, percentile, startServerChild } from "./server-child.js";

const HELP = `pnpm flood [options]: idle keep-alive connection flood against a server it starts

  --connections N     idle connections to open (default: 20000, at most ulimit -n less 200)
  --duration S        seconds the flood and the legitimate client run (default 20, 1 to 120)
  --addresses K       loopback source addresses the flood comes from, 127.0.1.1… (default 100)
  --legit N           legitimate client's concurrent requests (default 4), from 127.0.0.1
  --legit-keep-alive  the legitimate client keeps its connections (default: a new connection
                      per request, as clients arriving during the flood need)
  --server-fd-limit N the server's ulimit -n (default 16000: below the flood's 19,800, so an
                      unprotected server runs out of descriptors)
  --server-flags="…"  extra flags for \`partner-yield serve\` (always: --port 0 --log none
                      --rate-limit-quota 1000000000)
  --repo DIR          serve the checkout at DIR instead of this one (e.g. a worktree of main)
  -h, --help          this text
`;

const values = parseFlags("flood", HELP, {
  connections: { type: "string" },
  duration: { type: "string" },
  addresses: { type: "string" },
  legit: { type: "string" },
  "legit-keep-alive": { type: "boolean" },
  "server-fd-limit": { type: "string" },
  "server-flags": { type: "string" },
  repo: { type: "string" },
});
const intFlag = intFlagOf("flood");

const fdRoom = Math.max(0, openFilesLimit() - 200);
const asked = intFlag("connections", values.connections, 20_000, 1, 1_000_000);
const CONNECTIONS = Math.min(asked, fdRoom);
const DURATION_S = intFlag("duration", values.duration, 20, 1, 120);
const ADDRESSES = intFlag("addresses", values.addresses, 100, 1, 250);
const LEGIT = intFlag("legit", values.legit, 4, 1, 64);
const KEEP_ALIVE = values["legit-keep-alive"] === true;
const SERVER_FDS = intFlag(
  "server-fd-limit",
  values["server-fd-limit"],
  Math.min(16_000, openFilesLimit()),
  64,
  openFilesLimit(),
);
const serverFlags = (values["server-flags"] ?? "").split(/\s+/).filter((f) => f !== "");

const server = await startServerChild(
  ["--rate-limit-quota", "1000000000", ...serverFlags],
  values.repo,
  SERVER_FDS,
);
process.stdout.write(
  `flood: ${CONNECTIONS} idle connections${asked > CONNECTIONS ? ` (of ${asked} asked; ulimit -n is ${openFilesLimit()})` : ""} from ${ADDRESSES} addresses, ${DURATION_S} s, server pid ${server.pid} (ulimit -n ${SERVER_FDS}) ${serverFlags.join(" ")}; legitimate client: ${LEGIT} at a time, ${KEEP_ALIVE ? "keep-alive" : "a new connection per request"}\n`,
);

const deadline = performance.now() + DURATION_S * 1000;
const sockets = new Set<Socket>();
const flood = { connected: 0, answered: 0, closedByServer: 0, errors: new Map<string, number>() };
let stopping = false;
let peakServerFds = 0;
const sampler = setInterval(() => {
  peakServerFds = Math.max(peakServerFds, openFds(server.pid));
}, 250);

function openOne(i: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({
      port: server.port,
      host: "127.0.0.1",
      localAddress: `127.0.1.${(i % ADDRESSES) + 1}`,
    });
    let settled = false;
    const settle = () => {
      if (!settled) {
        settled = true;
        resolve();
      }
    };
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on("connect", () => {
      flood.connected++;
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      settle();
    });
    let gotAnswer = false;
    socket.on("data", () => {
      if (!gotAnswer) {
        gotAnswer = true;
        flood.answered++;
      }
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.message;
      flood.errors.set(code, (flood.errors.get(code) ?? 0) + 1);
      settle();
    });
    socket.on("close", () => {
      sockets.delete(socket);
      if (!stopping) flood.closedByServer++;
      settle();
    });
  });
}

async function runFlood(): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < CONNECTIONS && performance.now() < deadline) await openOne(next++);
  };
  await Promise.all(Array.from({ length: 1000 }, worker));
}

const legit = { ok: 0, failed: 0, statuses: new Map<string, number>(), latencies: [] as number[] };
async function runLegit(): Promise<void> {
  const pool = new Pool(server.url, {
    connections: LEGIT,
    connect: { timeout: 5_000 },
    headersTimeout: 5_000,
    bodyTimeout: 5_000,
  });
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      try {
        const res = await pool.request({
          method: "GET",
          path: "/api/partner/products",
          headers: { "x-api-key": DEMO.sandboxApiKey },
          reset: !KEEP_ALIVE,
        });
        await res.body.text();
        const key = String(res.statusCode);
        legit.statuses.set(key, (legit.statuses.get(key) ?? 0) + 1);
        if (res.statusCode === 200) {
          legit.ok++;
          legit.latencies.push(performance.now() - started);
        } else legit.failed++;
      } catch (error) {
        const key = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
        legit.statuses.set(key, (legit.statuses.get(key) ?? 0) + 1);
        legit.failed++;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: LEGIT }, worker));
  await pool.close().catch(() => undefined);
}

const started = performance.now();
const floodDone = runFlood();
await runLegit();
const openedIn = (performance.now() - started) / 1000;
await floodDone;
clearInterval(sampler);
const heldAtEnd = sockets.size;
const serverFdsAtEnd = openFds(server.pid);
stopping = true;
for (const s of sockets) s.destroy();
await server.stop();

const sorted = legit.latencies.sort((a, b) => a - b);
const total = legit.ok + legit.failed;
const ms = (v: number) => (Number.isNaN(v) ? "n/a" : `${v.toFixed(1)} ms`);
process.stdout.write(
  [
    `flood connections: ${flood.connected} connected, ${flood.answered} answered /healthz, ${flood.closedByServer} closed by the server during the run, ${heldAtEnd} still open at the end`,
    `flood errors: ${flood.errors.size === 0 ? "none" : [...flood.errors].map(([k, v]) => `${k} ${v}`).join(", ")}`,
    `server descriptors: peak ${peakServerFds}, at the end ${serverFdsAtEnd}`,
    `legitimate: ${legit.ok}/${total} ok (${total === 0 ? "n/a" : ((legit.ok / total) * 100).toFixed(2)} %), answers ${[...legit.statuses].map(([k, v]) => `${k}×${v}`).join(", ")}`,
    `legitimate latency: p50 ${ms(percentile(sorted, 0.5))}, p99 ${ms(percentile(sorted, 0.99))}, max ${ms(sorted.at(-1) ?? Number.NaN)} (run ${openedIn.toFixed(1)} s)`,
    "",
  ].join("\n"),
);
