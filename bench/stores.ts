/**
 * Store benchmarks (not tests): signed events accepted per second by a `partner-yield serve`
 * process on the in-memory stores, on PostgreSQL, and on PostgreSQL + Redis (1 KiB bodies, a fresh
 * idempotency key each, 50 connections, autocannon), with the server's resident memory after
 * BENCH_EVENTS events (default 100,000); then, in-process, events stored per second by
 * `PostgresEventStore.append` (50 appends in flight, a pool of 10, 1 KiB events, a fresh key each)
 * and rate-limit decisions per second of the in-memory limiter and the Redis one (50 decisions in
 * flight over 1000 partners, every hit counted), the Redis one in alternating rounds with
 * `redis-benchmark` on the same Redis: the limiter's script by `EVALSHA`, one hit a call, and
 * `INCR`, 50 clients, each call its own round trip (bench/redis-yardstick.ts).
 *
 *   pnpm bench:stores                         # needs PostgreSQL and Redis (as the tests do)
 *   BENCH_EVENTS=20000 BENCH_SECONDS=3 pnpm bench:stores
 *   pnpm bench:stores --in-process            # the in-process figures only (no server)
 *   pnpm bench:stores --decisions --rounds 5  # the rate-limit decisions and their yardsticks only
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
import { connectRedis, RATE_LIMIT_MANY_SCRIPT, RedisRateLimiter } from "../packages/store-redis/src/index.js";
import { BENCH_SERVER_ENV } from "./built-cli.js";
import { intFlagOf, parseFlags, usageError } from "./cli-flags.js";
import { createBenchDatabase } from "./pg-database.js";
import { REDIS_URL } from "./redis-prefix.js";
import { findRedisBenchmark, REDIS_BENCHMARK_INSTALL_HINT, runRedisBenchmark } from "./redis-yardstick.js";
import { median, spread } from "./stats.js";

type Redis = Awaited<ReturnType<typeof connectRedis>>;

const EVENTS = Number(process.env["BENCH_EVENTS"] ?? "100000");
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "5");
const CONNECTIONS = 50;
const HELP = `pnpm bench:stores [--in-process | --decisions] [--rounds n]

Signed events accepted per second by a partner-yield server on the in-memory stores, on
PostgreSQL and on PostgreSQL + Redis (1 KiB bodies, 50 connections, autocannon), with the server's
RSS after BENCH_EVENTS events; then, in this process, events stored per second by
PostgresEventStore.append and rate-limit decisions per second (memory and Redis). The Redis
limiter runs in alternating rounds with redis-benchmark on the same Redis (50 clients, no
pipelining): the limiter's own script by EVALSHA, one hit a call, and INCR. Each round prints
decisions (or calls) per second, Redis's CPU a decision (a call), and the limiter's script runs a
decision (Redis's own counters: run it on a Redis nothing else is using); then the medians,
lowest-highest round in brackets.

  --in-process   the in-process figures only (no server)
  --decisions    the rate-limit decisions and their redis-benchmark yardsticks only
  --rounds n     alternating rounds of the Redis limiter and redis-benchmark (default 3)

Environment: BENCH_EVENTS (default 100000), BENCH_SECONDS (default 5; also each limiter round),
BENCH_REDIS_REQUESTS (calls a redis-benchmark run, default 200000), REDIS_BENCHMARK (the
redis-benchmark to run, default the one on PATH), PARTNER_YIELD_TEST_DATABASE_URL and
PARTNER_YIELD_TEST_REDIS_URL (as the tests).
`;
const FLAGS = parseFlags("bench:stores", HELP, {
  "in-process": { type: "boolean" },
  decisions: { type: "boolean" },
  rounds: { type: "string" },
});
if (FLAGS["in-process"] === true && FLAGS.decisions === true)
  usageError("bench:stores", "--in-process and --decisions each choose a part; give one");
const IN_PROCESS_ONLY = FLAGS["in-process"] === true;
const DECISIONS_ONLY = FLAGS.decisions === true;
const ROUNDS = intFlagOf("bench:stores")("rounds", FLAGS.rounds, 3, 1, 50);
const REDIS_REQUESTS = Number(process.env["BENCH_REDIS_REQUESTS"] ?? "200000");
if (!Number.isSafeInteger(REDIS_REQUESTS) || REDIS_REQUESTS < 1000)
  usageError(
    "bench:stores",
    `BENCH_REDIS_REQUESTS must be an integer of at least 1000, not ${REDIS_REQUESTS}`,
  );
const REDIS_BENCHMARK = findRedisBenchmark();
if (REDIS_BENCHMARK === undefined) {
  process.stderr.write(
    `bench:stores: redis-benchmark was not found; its runs are the Redis limiter's yardstick. ${REDIS_BENCHMARK_INSTALL_HINT}\n`,
  );
  process.exit(1);
}
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

/** Decisions per second of `limiter`, 50 in flight, spread over 1000 partners. */
async function decisionsPerSecond(limiter: RateLimiter): Promise<{ count: number; perSecond: number }> {
  let done = 0;
  let i = 0;
  const end = performance.now() + SECONDS * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        // A quota no round reaches: every decision takes the script's allowed path, as the
        // yardstick's calls do.
        await limiter.hit(`rate:partner-${i++ % 1000}:production`, 1_000_000_000, 60_000);
        done++;
      }
    }),
  );
  return { count: done, perSecond: done / ((performance.now() - start) / 1000) };
}

/** Redis's `EVALSHA` calls so far and its CPU seconds (user + system), from `INFO`. */
async function redisCounters(redis: Redis): Promise<{ evalsha: number; cpuSeconds: number }> {
  const info = await redis.info("all");
  const field = (pattern: RegExp) => Number(pattern.exec(info)?.[1] ?? "0");
  return {
    evalsha: field(/^cmdstat_evalsha:calls=(\d+)/m),
    cpuSeconds: field(/^used_cpu_sys:([\d.]+)/m) + field(/^used_cpu_user:([\d.]+)/m),
  };
}

interface DecisionSample {
  /** Decisions (or calls) per second. */
  readonly perSecond: number;
  /** Redis's CPU a decision (a call), µs. */
  readonly redisCpuUs: number;
  /** Script runs a decision (the limiter only). */
  readonly runsPerDecision?: number;
}

/** Runs `work` (which returns how many decisions or calls it made and their rate) and reads Redis's counters around it. */
async function sampled(
  redis: Redis,
  work: () => Promise<{ count: number; perSecond: number }>,
): Promise<DecisionSample & { runs: number; count: number }> {
  const before = await redisCounters(redis);
  const { count, perSecond } = await work();
  const after = await redisCounters(redis);
  return {
    perSecond,
    redisCpuUs: ((after.cpuSeconds - before.cpuSeconds) * 1e6) / count,
    runs: after.evalsha - before.evalsha,
    count,
  };
}

const perSecondText = (x: number) => Math.round(x).toLocaleString("en-US");

/**
 * The Redis limiter against redis-benchmark on the same Redis, in `ROUNDS` alternating rounds:
 * the limiter (50 decisions in flight, 1000 partners, fresh keys each round), then the limiter's
 * script by EVALSHA (one hit a call on the keys of 1000 partners, a quota no call reaches), then INCR;
 * redis-benchmark with 50 clients and no pipelining.
 */
async function benchDecisions(redis: Redis, prefix: string): Promise<void> {
  const memory = await decisionsPerSecond(new MemoryRateLimiter());
  console.log(`  memory limiter ${perSecondText(memory.perSecond).padStart(10)} decisions/s (no Redis)`);
  const sha = String(await redis.script("LOAD", RATE_LIMIT_MANY_SCRIPT));
  const ours: DecisionSample[] = [];
  const script: DecisionSample[] = [];
  const incr: DecisionSample[] = [];
  const line = (name: string, x: DecisionSample, unit: string) =>
    console.log(
      `    ${name.padEnd(40)} ${perSecondText(x.perSecond).padStart(9)} ${unit}/s  Redis CPU ${x.redisCpuUs.toFixed(1).padStart(5)} µs a ${unit.slice(0, -1)}${x.runsPerDecision === undefined ? "" : `  ${x.runsPerDecision.toFixed(3)} script runs a decision`}`,
    );
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`  round ${round} of ${ROUNDS}`);
    const limiter = new RedisRateLimiter({ redis, keyPrefix: `${prefix}r${round}:` });
    const mine = await sampled(redis, () => decisionsPerSecond(limiter));
    ours.push({ ...mine, runsPerDecision: mine.runs / mine.count });
    line("RedisRateLimiter (ours, in process)", ours.at(-1)!, "decisions");

    // The limiter's keys for 1000 partners, as ours. redis-benchmark draws each placeholder on its
    // own, so a call's run set and state hash may belong to two partners; with a quota no call
    // reaches, every call still takes the script's allowed path, as ours do.
    const yardstick = `${prefix}y${round}:`;
    const keys = [
      `${yardstick}{rate:partner-__rand_int__:production}:w`,
      `${yardstick}{rate:partner-__rand_int__:production}:w:n`,
    ];
    const evalsha = await sampled(redis, async () => {
      const result = await runRedisBenchmark(REDIS_BENCHMARK!, REDIS_URL, {
        clients: CONNECTIONS,
        requests: REDIS_REQUESTS,
        keyspace: 1000,
        command: ["EVALSHA", sha, "2", ...keys, "1000000000", "60000", "1", "-1"],
      });
      return { count: REDIS_REQUESTS, perSecond: result.perSecond };
    });
    // redis-benchmark stops at an error reply (runRedisBenchmark then throws); Redis ran at least
    // its calls (other clients of a shared Redis may add theirs to the count).
    if (evalsha.runs < REDIS_REQUESTS)
      throw new Error(`redis-benchmark made ${REDIS_REQUESTS} calls; Redis counted ${evalsha.runs} EVALSHA`);
    script.push(evalsha);
    line("redis-benchmark: EVALSHA of the script", evalsha, "calls");

    const increments = await sampled(redis, async () => {
      const result = await runRedisBenchmark(REDIS_BENCHMARK!, REDIS_URL, {
        clients: CONNECTIONS,
        requests: REDIS_REQUESTS,
        command: ["INCR", `${prefix}incr`],
      });
      return { count: REDIS_REQUESTS, perSecond: result.perSecond };
    });
    if (Number(await redis.get(`${prefix}incr`)) !== REDIS_REQUESTS * round)
      throw new Error("redis-benchmark's INCR calls did not all count");
    incr.push(increments);
    line("redis-benchmark: INCR", increments, "calls");
  }
  const ratios = (to: readonly DecisionSample[]) => ours.map((x, i) => x.perSecond / to[i]!.perSecond);
  const times = (x: number) => `${x.toFixed(2)}x`;
  console.log(`  medians of ${ROUNDS} rounds (lowest-highest round)`);
  console.log(
    `    ours             ${spread(
      ours.map((x) => x.perSecond),
      perSecondText,
    )} decisions/s`,
  );
  console.log(
    `    EVALSHA          ${spread(
      script.map((x) => x.perSecond),
      perSecondText,
    )} calls/s`,
  );
  console.log(
    `    INCR             ${spread(
      incr.map((x) => x.perSecond),
      perSecondText,
    )} calls/s`,
  );
  console.log(`    ours ÷ EVALSHA   ${spread(ratios(script), times)} (same round)`);
  console.log(`    ours ÷ INCR      ${spread(ratios(incr), times)} (same round)`);
  console.log(
    `    Redis CPU, µs a decision / call: ours ${spread(
      ours.map((x) => x.redisCpuUs),
      (x) => x.toFixed(1),
    )}, EVALSHA ${spread(
      script.map((x) => x.redisCpuUs),
      (x) => x.toFixed(1),
    )}, INCR ${spread(
      incr.map((x) => x.redisCpuUs),
      (x) => x.toFixed(1),
    )}`,
  );
  console.log(
    `    script runs a decision (ours): ${spread(
      ours.map((x) => x.runsPerDecision!),
      (x) => x.toFixed(3),
    )}`,
  );
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

const database = DECISIONS_ONLY ? undefined : await createBenchDatabase();
const dbUrl = database?.url ?? "";
const redisPrefix = `py-bench:${uniqueTag()}:`;
const redis = await connectRedis({ url: REDIS_URL, commandTimeoutMs: 5000 }).catch(async (error) => {
  await database?.drop();
  throw error;
});
try {
  console.log(
    `partner-yield store benchmarks (node ${process.version}; ${CONNECTIONS} connections, 1 KiB signed events, ${SECONDS} s timed, RSS after ${EVENTS.toLocaleString("en-US")} events)`,
  );
  if (!IN_PROCESS_ONLY && !DECISIONS_ONLY) {
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

  if (!DECISIONS_ONLY) {
    console.log(
      "\nevents stored per second (in-process, PostgresEventStore.append, 50 in flight, pool of 10)",
    );
    console.log(
      `  postgres ${Math.round(await appendsPerSecond(dbUrl))
        .toLocaleString("en-US")
        .padStart(8)} events/s`,
    );
  }

  console.log(
    "\nrate-limit decisions per second (in-process, 50 in flight, 1000 partners, every hit counted), against redis-benchmark (50 clients, one call a round trip)",
  );
  await benchDecisions(redis, redisPrefix);
} finally {
  await database?.drop();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${redisPrefix}*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
  redis.disconnect();
}
