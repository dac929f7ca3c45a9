/**
 * `pnpm bench:propagation`: how long a key revocation takes to reach every instance. Two built
 * `partner-yield serve` processes on one PostgreSQL database (and one Redis, with a key prefix of
 * this run's own); for each change, a fresh key is created, accepted by both instances (200), then
 * revoked, and both instances are polled back to back until each answers 401: the time from the
 * revoke's return (its commit) to that 401, per instance and for the later of the two. Target
 * (issue 28): p99 <= 100 ms. `--help` lists the flags.
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";
import { DEMO_CREDENTIALS as DEMO } from "../packages/core/src/demo/index.js";
import { createPool, PostgresPartnerAdmin } from "../packages/store-postgres/src/index.js";
import { buildCli, builtEnv, cliBin, migrateAndImportFixtures, ROOT, runBuiltCli } from "./built-cli.js";
import { intFlagOf, parseFlags, usageError } from "./cli-flags.js";
import {
  ADMIN_URL,
  type BenchDatabase,
  createBenchDatabase,
  dropLiveDatabases,
  PostgresUnreachableError,
} from "./pg-database.js";
import { type BenchRedis, benchRedis, RedisUnreachableError } from "./redis-prefix.js";

const HELP = `pnpm bench:propagation [flags]

Two built \`partner-yield serve\` processes (--log none, --rate-limit-quota 1000000000) on one
PostgreSQL database of this run's own (created, \`db migrate\`, \`db import-fixtures fixtures/\`,
dropped at the end, also on failure or Ctrl-C) and one Redis (--redis-url with a key prefix of
its own), both on 127.0.0.1. For each change: a fresh sandbox key of the demo partner is created
and answered 200 by both instances; then it is revoked and both are polled back to back (one
request in flight each) until each answers 401. Prints p50/p99/max of the time from the revoke's
return to each instance's first 401, and of the later of the two; target: p99 <= 100 ms.

  --changes n       revocations to time (default 200, at most 10000)
  --via admin|cli   how to revoke: admin (default) calls PostgresPartnerAdmin.revokeKey in this
                    process, what \`partner-yield keys revoke\` calls, timed from its return (the
                    commit); cli runs the built \`partner-yield keys revoke ID\`, timed from the
                    command's exit (its process start and exit add to each change's wall time,
                    not to the figure)
  --timeout-ms n    how long each instance is polled after a revoke before the change counts as
                    not seen (default 5000, at most 60000)
  --max-seconds n   stop starting new changes after this long (default 600), and report those done
  --port-base n     the two servers' ports: n and n + 1 (default 21300)

Needs PostgreSQL at PARTNER_YIELD_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/
postgres, a user that may create databases) and Redis at PARTNER_YIELD_TEST_REDIS_URL (default
redis://127.0.0.1:6379). Each change polls from a loopback address of its own (127.1.x.y): every
401 counts against the failed-authentication limit of its client address (30 a minute, CONTRACT
§4), which would answer 429 before the key is looked at after 15 changes from one address.
`;

const flags = parseFlags("bench:propagation", HELP, {
  changes: { type: "string" },
  via: { type: "string" },
  "timeout-ms": { type: "string" },
  "max-seconds": { type: "string" },
  "port-base": { type: "string" },
});
const int = intFlagOf("bench:propagation");
const CHANGES = int("changes", flags.changes, 200, 1, 10_000);
const TIMEOUT_MS = int("timeout-ms", flags["timeout-ms"], 5000, 1, 60_000);
const MAX_SECONDS = int("max-seconds", flags["max-seconds"], 600, 1, 86_400);
const PORT_BASE = int("port-base", flags["port-base"], 21300, 1024, 65_534);
const VIA = flags.via ?? "admin";
if (VIA !== "admin" && VIA !== "cli") {
  usageError("bench:propagation", `--via must be admin or cli (got ${JSON.stringify(VIA)})`);
}
/** The target of issue 28: the later instance's first 401, p99. */
const TARGET_P99_MS = 100;
const PATH = "/api/partner/products/usdc-base-prime";

// ---- the servers ---------------------------------------------------------------------------

/** An instance of the built server. */
class Instance {
  static readonly running = new Set<Instance>();
  readonly #child: ChildProcess;
  #stderr = "";
  /** 200 answers to a key whose revoke had already returned, over the run. */
  staleAnswers = 0;

  constructor(
    readonly name: string,
    readonly port: number,
    args: readonly string[],
  ) {
    this.#child = spawn(
      process.execPath,
      [cliBin(), "serve", "--host", "127.0.0.1", "--port", String(port), ...args],
      {
        cwd: ROOT,
        env: builtEnv(),
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    this.#child.stderr!.setEncoding("utf8");
    this.#child.stderr!.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4000);
    });
    Instance.running.add(this);
    this.#child.once("exit", () => Instance.running.delete(this));
  }

  /** Resolves when `/healthz` answers (at most 60 s). */
  async ready(): Promise<void> {
    const until = Date.now() + 60_000;
    const agent = new Agent();
    try {
      while (Date.now() < until) {
        if (this.#child.exitCode !== null)
          throw new Error(`${this.name} exited (code ${this.#child.exitCode}):\n${this.#stderr}`);
        const answer = await get(this.port, "/healthz", {}, agent, "127.0.0.1").catch(() => undefined);
        if (answer?.status === 200) return;
        await delay(200);
      }
    } finally {
      agent.destroy();
    }
    throw new Error(`${this.name} did not answer on port ${this.port} within 60 s:\n${this.#stderr}`);
  }

  /** SIGTERM (its graceful shutdown), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once("exit", resolve));
    this.#child.kill("SIGTERM");
    await Promise.race([exited, delay(10_000)]);
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGKILL");
  }
}

/** One GET: its status and when its answer's head arrived (performance.now()). */
function get(
  port: number,
  path: string,
  headers: Record<string, string>,
  agent: Agent,
  localAddress: string,
): Promise<{ status: number; at: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers, agent, localAddress }, (res) => {
      const at = performance.now();
      res.resume();
      res.once("end", () => resolve({ status: res.statusCode ?? 0, at }));
      res.once("error", reject);
    });
    req.setTimeout(5000, () => req.destroy(new Error(`no answer within 5 s from port ${port}`)));
    req.once("error", reject);
    req.end();
  });
}

/** The loopback address change `i` polls from: 127.1.x.y, y from 1 to 250. */
function sourceAddress(i: number): string {
  return `127.1.${Math.floor(i / 250)}.${1 + (i % 250)}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- one change ----------------------------------------------------------------------------

/** One change's outcome: per instance, ms from the revoke's return to its first 401, or why not. */
type Seen = number | { readonly failure: string };

/** Polls `instance` with `key` until it answers 401 (ms since `t0`), at most until `deadline`. */
async function firstRefusal(
  instance: Instance,
  key: string,
  agent: Agent,
  from: string,
  t0: number,
  deadline: number,
): Promise<Seen> {
  for (;;) {
    const { status, at } = await get(instance.port, PATH, { "x-api-key": key }, agent, from);
    if (status === 401) return at - t0;
    if (status !== 200) return { failure: `${instance.name} answered ${status} while polling` };
    instance.staleAnswers++;
    if (at > deadline) return { failure: `${instance.name}: not refused within ${TIMEOUT_MS} ms` };
  }
}

/** Waits until `instance` accepts `key` (200), at most TIMEOUT_MS. */
async function accepted(
  instance: Instance,
  key: string,
  agent: Agent,
  from: string,
): Promise<string | undefined> {
  const deadline = performance.now() + TIMEOUT_MS;
  for (;;) {
    const { status, at } = await get(instance.port, PATH, { "x-api-key": key }, agent, from);
    if (status === 200) return undefined;
    if (at > deadline) return `${instance.name} did not accept a new key within ${TIMEOUT_MS} ms (${status})`;
    await delay(5);
  }
}

async function oneChange(
  i: number,
  admin: PostgresPartnerAdmin,
  databaseUrl: string,
  instances: readonly Instance[],
): Promise<Seen[]> {
  const created = await admin.createKey({
    partnerId: DEMO.partnerId,
    environment: "sandbox",
    label: `bench:propagation ${i}`,
  });
  if (!created.ok) throw new Error(`creating a key: ${created.code}`);
  const { apiKey, summary } = created.value;
  const from = sourceAddress(i);
  const agents = instances.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  try {
    // Both instances answer the new key first (and hold whatever they cache of it).
    const refused = await Promise.all(instances.map((s, n) => accepted(s, apiKey, agents[n]!, from)));
    const failure = refused.find((r) => r !== undefined);
    if (failure !== undefined) return instances.map(() => ({ failure }));
    if (VIA === "admin") {
      const revoked = await admin.revokeKey(summary.id);
      if (!revoked.ok) throw new Error(`revoking key ${summary.id}: ${revoked.code}`);
    } else {
      await runBuiltCli(["keys", "revoke", summary.id, "--database-url", databaseUrl], 60_000);
    }
    const t0 = performance.now();
    return await Promise.all(
      instances.map((s, n) => firstRefusal(s, apiKey, agents[n]!, from, t0, t0 + TIMEOUT_MS)),
    );
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

// ---- the run -------------------------------------------------------------------------------

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
}

function row(label: string, seen: readonly Seen[], stale: number): string {
  const times = seen.filter((s): s is number => typeof s === "number").sort((a, b) => a - b);
  const ms = (x: number) => (Number.isNaN(x) ? "–" : x.toFixed(1));
  return `| ${label} | ${times.length} | ${ms(percentile(times, 50))} | ${ms(percentile(times, 99))} | ${ms(times.at(-1) ?? Number.NaN)} | ${seen.length - times.length} | ${stale} |`;
}

/** The later of the instances' times, or the first failure. */
function later(perInstance: readonly Seen[]): Seen {
  const failure = perInstance.find((s) => typeof s !== "number");
  return failure ?? Math.max(...(perInstance as number[]));
}

/** The run's Redis prefix while it holds one, for the signal handler. */
let liveRedis: BenchRedis | undefined;

async function main(): Promise<void> {
  let database: BenchDatabase | undefined;
  let redis: BenchRedis | undefined;
  const instances: Instance[] = [];
  let pool: ReturnType<typeof createPool> | undefined;
  try {
    try {
      database = await createBenchDatabase(ADMIN_URL, { empty: true });
      redis = await benchRedis();
      liveRedis = redis;
    } catch (error) {
      if (error instanceof PostgresUnreachableError || error instanceof RedisUnreachableError) {
        process.stderr.write(`bench:propagation: needs PostgreSQL and Redis: ${error.message}\n`);
        process.exitCode = 1;
        return;
      }
      throw error;
    }
    buildCli();
    await migrateAndImportFixtures(database.url);
    const args = [
      "--log",
      "none",
      "--rate-limit-quota",
      "1000000000",
      "--database-url",
      database.url,
      "--redis-url",
      redis.url,
      "--redis-key-prefix",
      redis.prefix,
    ];
    instances.push(new Instance("A", PORT_BASE, args), new Instance("B", PORT_BASE + 1, args));
    await Promise.all(instances.map((s) => s.ready()));
    pool = createPool({ connectionString: database.url, max: 2, statementTimeoutMs: 10_000 });
    const admin = new PostgresPartnerAdmin(pool);

    const results: Seen[][] = [];
    const started = performance.now();
    let lastProgress = started;
    for (let i = 0; i < CHANGES; i++) {
      if (performance.now() - started > MAX_SECONDS * 1000) {
        process.stderr.write(`bench:propagation: --max-seconds ${MAX_SECONDS} reached after ${i} changes\n`);
        break;
      }
      results.push(await oneChange(i, admin, database.url, instances));
      const now = performance.now();
      if (now - lastProgress > 5000 || i + 1 === CHANGES) {
        lastProgress = now;
        const times = results
          .map(later)
          .filter((s): s is number => typeof s === "number")
          .sort((a, b) => a - b);
        process.stderr.write(
          `bench:propagation: ${i + 1}/${CHANGES} changes in ${((now - started) / 1000).toFixed(0)} s, ` +
            `both refused: p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms\n`,
        );
      }
    }

    const how =
      VIA === "admin"
        ? "PostgresPartnerAdmin.revokeKey in the runner (what `partner-yield keys revoke` calls), timed from its return"
        : "the built `partner-yield keys revoke ID`, timed from the command's exit";
    console.log(
      `${results.length} key revocations, each of a fresh key both instances had answered 200; revoked by ${how}; ` +
        `both instances polled back to back (one request in flight each, GET ${PATH}) until their first 401, ` +
        `at most ${TIMEOUT_MS} ms. Two \`partner-yield serve\` (built dist/, --log none) on ${database.name} and ` +
        `Redis prefix ${redis.prefix}.\n`,
    );
    console.log(
      "| instance | changes refused | p50 ms | p99 ms | max ms | not seen / failed | 200s after the revoke returned |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    instances.forEach((s, n) => {
      console.log(
        row(
          `${s.name} (port ${s.port})`,
          results.map((r) => r[n]!),
          s.staleAnswers,
        ),
      );
    });
    const both = results.map(later);
    console.log(
      row(
        "both (the later of the two)",
        both,
        instances.reduce((n, s) => n + s.staleAnswers, 0),
      ),
    );
    const failures = [...new Set(results.flat().flatMap((s) => (typeof s === "number" ? [] : [s.failure])))];
    for (const f of failures.slice(0, 5)) console.log(`\nnot seen: ${f}`);
    const times = both.filter((s): s is number => typeof s === "number").sort((a, b) => a - b);
    const p99 = percentile(times, 99);
    const met = failures.length === 0 && p99 <= TARGET_P99_MS;
    console.log(
      `\ntarget: p99 of "both" <= ${TARGET_P99_MS} ms, every change seen: ${met ? "met" : "NOT met"} ` +
        `(p99 ${Number.isNaN(p99) ? "–" : p99.toFixed(1)} ms, ${both.length - times.length} not seen)`,
    );
  } finally {
    await Promise.all(instances.map((s) => s.stop()));
    await pool?.end().catch(() => undefined);
    await Promise.all([database?.drop(), redis?.clear()]);
  }
}

// Ctrl-C (or a SIGTERM) stops the servers, drops the database and clears the Redis prefix.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    process.stderr.write(`bench:propagation: ${signal}: stopping the servers and dropping the database\n`);
    Promise.all([...Instance.running].map((s) => s.stop()))
      .then(() => Promise.all([dropLiveDatabases(), liveRedis?.clear()]))
      .catch((error: Error) =>
        process.stderr.write(`bench:propagation: cleaning up failed: ${error.message}\n`),
      )
      .finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  });
}

await main();
