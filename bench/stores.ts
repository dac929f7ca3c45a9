/**
 * Store benchmarks (not tests): signed events accepted per second by a `partner-yield serve`
 * process on the in-memory stores, on PostgreSQL, and on PostgreSQL + Redis (1 KiB bodies, a fresh
 * idempotency key each, 50 connections, autocannon), with the server's resident memory after
 * BENCH_EVENTS events (default 100,000); then, in-process, events stored per second by
 * `PostgresEventStore.append` (50 appends in flight, a pool of 10, 1 KiB events, a fresh key each)
 * and rate-limit decisions per second of the in-memory limiter and the Redis one (50 decisions in
 * flight, 1000 partners of quota 1000).
 *
 *   pnpm bench:stores                         # needs PostgreSQL and Redis (as the tests do)
 *   BENCH_EVENTS=20000 BENCH_SECONDS=3 pnpm bench:stores
 *   pnpm bench:stores --in-process            # the in-process figures only (no server)
 *
 * Each run uses a database (bench/pg-database.ts) and a Redis key prefix of its own, removed at the end.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { DEMO_CREDENTIALS as DEMO } from "../packages/core/src/demo/index.js";
import { MemoryRateLimiter, type RateLimiter, signBody } from "../packages/core/src/index.js";
import { newEvent, uniqueTag } from "../packages/core/src/testing/index.js";
import { createPool, PostgresEventStore } from "../packages/store-postgres/src/index.js";
import { connectRedis, RedisRateLimiter } from "../packages/store-redis/src/index.js";
import { BENCH_SERVER_ENV } from "./built-cli.js";
import { parseFlags } from "./cli-flags.js";
import { createBenchDatabase } from "./pg-database.js";

const EVENTS = Number(process.env["BENCH_EVENTS"] ?? "100000");
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "5");
const CONNECTIONS = 50;
const HELP = `pnpm bench:stores [--in-process]

Signed events accepted per second by a partner-yield server on the in-memory stores, on
PostgreSQL and on PostgreSQL + Redis (1 KiB bodies, 50 connections, autocannon), with the server's
RSS after BENCH_EVENTS events; then, in this process, events stored per second by
PostgresEventStore.append and rate-limit decisions per second (memory and Redis).

  --in-process   the in-process figures only (no server)

Environment: BENCH_EVENTS (default 100000), BENCH_SECONDS (default 5),
PARTNER_YIELD_TEST_DATABASE_URL and PARTNER_YIELD_TEST_REDIS_URL (as the tests).
`;
const IN_PROCESS_ONLY =
  parseFlags("bench:stores", HELP, { "in-process": { type: "boolean" } })["in-process"] === true;
const REDIS_URL = process.env["PARTNER_YIELD_TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379";
const CLI = fileURLToPath(new URL("../packages/server/src/cli.ts", import.meta.url));

const body = JSON.stringify({
  event_type: "partner.user.created",
  occurred_at: "2026-11-20T10:15:00Z",
  data: { blob: "x".repeat(940) },
});
const signature = signBody(DEMO.signingSecret, new TextEncoder().encode(body));

function rssMiB(pid: number): number {
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return kib / 1024;
}

async function startServer(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CLI, "serve", "--port", "0", "--log", "none", ...args],
    {
      env: { ...process.env, ...BENCH_SERVER_ENV, NODE_OPTIONS: "--conditions=@partner-yield/source" },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  for (;;) {
    const url = /serving \w+ at (http:\/\/[^\s]+)/.exec(out)?.[1];
    if (url !== undefined && out.includes("to here")) return { url, child };
    if (child.exitCode !== null) throw new Error(`server exited: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sends `amount` events (or for `seconds`), each with a new key; returns accepted per second. */
async function fire(url: string, run: string, limit: { amount: number } | { duration: number }) {
  let n = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    ...limit,
    requests: [
      {
        method: "POST",
        path: "/api/partner/webhooks/inbound",
        headers: {
          "content-type": "application/json",
          "x-api-key": DEMO.sandboxApiKey,
          "x-partner-event": "partner.user.created",
          "x-partner-signature": signature,
        },
        body,
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, "idempotency-key": `${run}-${n++}` } }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(
      `${result.non2xx} non-2xx answers and ${result.errors} errors (answers by status: ${JSON.stringify(
        Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count])),
      )})`,
    );
  return { perSecond: result.requests.average, p99: result.latency.p99, total: result.requests.total };
}

interface Row {
  stores: string;
  perSecond: number;
  p99: number;
  rssStart: number;
  rssAfter: number;
}

async function benchEvents(stores: string, args: string[]): Promise<Row> {
  const { url, child } = await startServer(["--rate-limit-quota", "1000000000", ...args]);
  try {
    const run = `bench-${uniqueTag()}`;
    await fire(url, `${run}-warm`, { amount: 2000 });
    const rssStart = rssMiB(child.pid!);
    const timed = await fire(url, `${run}-timed`, { duration: SECONDS });
    const rest = Math.max(0, EVENTS - timed.total - 2000);
    if (rest > 0) await fire(url, `${run}-fill`, { amount: rest });
    const rssAfter = rssMiB(child.pid!);
    console.log(
      `  ${stores.padEnd(22)} ${Math.round(timed.perSecond).toLocaleString("en-US").padStart(8)} events/s  p99 ${String(timed.p99).padStart(4)} ms  RSS ${rssStart.toFixed(0)} → ${rssAfter.toFixed(0)} MiB after ${EVENTS.toLocaleString("en-US")} events`,
    );
    return { stores, perSecond: timed.perSecond, p99: timed.p99, rssStart, rssAfter };
  } finally {
    child.kill("SIGKILL");
  }
}

async function decisionsPerSecond(limiter: RateLimiter): Promise<number> {
  let done = 0;
  let i = 0;
  const end = performance.now() + SECONDS * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        await limiter.hit(`rate:partner-${i++ % 1000}:production`, 1000, 60_000);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/** Events stored per second by `PostgresEventStore.append`, 50 in flight, each with a new key. */
async function appendsPerSecond(url: string): Promise<number> {
  const pool = createPool({ connectionString: url });
  const store = new PostgresEventStore(pool);
  const run = `bench-${uniqueTag()}`;
  const data = { blob: "x".repeat(940) };
  const event = newEvent({ partnerId: "bench", data, fingerprint: "f".repeat(64) });
  let i = 0;
  const append = async () => {
    const result = await store.append({ ...event, idempotencyKey: `${run}-${i++}` });
    if (result.status !== "created") throw new Error(`expected created, got ${result.status}`);
  };
  try {
    for (let n = 0; n < 2000; n += CONNECTIONS)
      await Promise.all(Array.from({ length: CONNECTIONS }, append));
    let done = 0;
    const start = performance.now();
    const end = start + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < end) {
          await append();
          done++;
        }
      }),
    );
    return done / ((performance.now() - start) / 1000);
  } finally {
    await pool.end();
  }
}

const database = await createBenchDatabase();
const dbUrl = database.url;
const redisPrefix = `py-bench:${uniqueTag()}:`;
const redis = await connectRedis({ url: REDIS_URL, commandTimeoutMs: 5000 }).catch(async (error) => {
  await database.drop();
  throw error;
});
try {
  console.log(
    `partner-yield store benchmarks (node ${process.version}; ${CONNECTIONS} connections, 1 KiB signed events, ${SECONDS} s timed, RSS after ${EVENTS.toLocaleString("en-US")} events)`,
  );
  if (!IN_PROCESS_ONLY) {
    console.log("\nevents accepted per second (a server process; autocannon in this one)");
    // The in-memory store's bounds lifted (its estimate of a 1 KiB event is about 3 KB: 100,000 of
    // them pass the default 256 MiB), as bench:http lifts them.
    const memory = await benchEvents("memory", [
      "--max-events",
      "1000000",
      "--max-event-bytes",
      "2147483648",
    ]);
    const postgres = await benchEvents("postgres", ["--database-url", dbUrl]);
    const both = await benchEvents("postgres + redis", [
      "--database-url",
      dbUrl,
      "--redis-url",
      REDIS_URL,
      "--redis-key-prefix",
      redisPrefix,
    ]);
    for (const row of [postgres, both])
      console.log(`  ${row.stores}: ${(row.perSecond / memory.perSecond).toFixed(2)}× memory`);
  }

  console.log("\nevents stored per second (in-process, PostgresEventStore.append, 50 in flight, pool of 10)");
  console.log(
    `  postgres ${Math.round(await appendsPerSecond(dbUrl))
      .toLocaleString("en-US")
      .padStart(8)} events/s`,
  );

  console.log("\nrate-limit decisions per second (in-process, 50 in flight, 1000 partners, quota 1000)");
  const memoryLimiter = await decisionsPerSecond(new MemoryRateLimiter());
  const redisLimiter = await decisionsPerSecond(new RedisRateLimiter({ redis, keyPrefix: redisPrefix }));
  console.log(
    `  memory ${Math.round(memoryLimiter).toLocaleString("en-US").padStart(10)} decisions/s (baseline)`,
  );
  console.log(
    `  redis  ${Math.round(redisLimiter).toLocaleString("en-US").padStart(10)} decisions/s  ${(redisLimiter / memoryLimiter).toFixed(3)}× memory`,
  );
} finally {
  await database.drop();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${redisPrefix}*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
  redis.disconnect();
}
