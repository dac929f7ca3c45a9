/**
 * `pnpm bench:http`: our server against a bare node:http server answering the same bytes (and,
 * for GET product, Fastify and Hono counterparts), each in its own child process, loaded with
 * autocannon (or wrk) over loopback in alternating rounds. Prints req/s, p50/p99 latency, the server's CPU
 * µs per request (process.cpuUsage of the child) and RSS, with ratios to the bare server; for the
 * `-pg` scenarios, our server on a PostgreSQL database of its own and Redis beside its in-memory
 * twin, pgbench's yardsticks on the same database, PostgreSQL's own CPU per request read from
 * /proc, and the ratios against the targets of issue 28. `--loader wrk` loads the servers with wrk
 * (C) instead of autocannon. `--help` lists the flags.
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, devNull } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { DEMO_CREDENTIALS as DEMO } from "../../packages/core/src/demo/index.js";
import { signBody } from "../../packages/core/src/index.js";
import { BENCH_SERVER_ENV, buildCli, cliBin, migrateAndImportFixtures } from "../built-cli.js";
import { intFlagOf, parseFlags, usageError } from "../cli-flags.js";
import {
  ADMIN_URL,
  type BenchDatabase,
  createBenchDatabase,
  dropLiveDatabases,
  PG_MODULE,
  PostgresUnreachableError,
} from "../pg-database.js";
import { type BenchRedis, benchRedis, RedisUnreachableError } from "../redis-prefix.js";
import { median, spread } from "../stats.js";
import { machineCpuReader, machineCpuSince } from "./machine-cpu.js";
import { clockTicks, type PgCpuSample, pgCpuReader, pgCpuSince, trackPgCpu } from "./pg-cpu.js";
import {
  eventInsert,
  eventInsertsStored,
  findPgbench,
  insertWithoutFlush,
  keyLookup,
  PGBENCH_INSTALL_HINT,
  type PgbenchWorkload,
  runPgbench,
  setUpWorkloads,
  singleInsert,
} from "./pgbench.js";
import { productFixtures } from "./scaling-fixtures.js";
import type { CapturedResponse, ServerSpec } from "./servers/common.js";
import { childrenCpuMicros, findWrk, runWrk, threadsFor, WRK_INSTALL_HINT, wrkVersion } from "./wrk.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));

const HELP = `pnpm bench:http [flags]

Every table run is followed by one of the whole machine during each run (/proc/stat: the busy CPU
of all cores per request, how busy they were) and the load generator's own CPU per request.

  --scenarios a,b     product, product-nolog, healthz, yield-calc, position, post, product-pg,
                      yield-calc-pg, position-pg, post-pg (default: all); "pg" stands for the four
                      -pg ones. Any scenario + "-nolog" runs our server with --log none.
                      X-pg is X with our server on PostgreSQL and Redis, as a user runs it (built
                      dist/, --log none, --database-url to a database of its own, created at
                      start, migrated and filled with \`db migrate\` and \`db import-fixtures\`,
                      dropped at the end, also on failure or Ctrl-C; --redis-url with a key prefix
                      of its own), always beside its in-memory twin X-nolog and the same bare
                      server in the same rounds. pgbench on the same database joins the rounds:
                      a prepared key lookup on api_keys in the first GET -pg group, a single-row
                      insert + commit in post-pg's, and beside it the same insert with
                      synchronous_commit off (not durable, no target: how much of the insert's
                      rate is the wait for the disk's flush), and our event row inserted the way
                      the event store does, one a transaction (no target: what PostgreSQL's
                      single-row commits reach with our row). Then PostgreSQL's own CPU per
                      request (utime + stime from /proc, which the CPU column cannot see) and the
                      targets of issue 28 (ratios to the twin of the same round; post-pg to
                      pgbench's durable insert).
                      It needs PostgreSQL at PARTNER_YIELD_TEST_DATABASE_URL (default
                      postgres://postgres@127.0.0.1:5432/postgres, a user that may create
                      databases) and Redis at PARTNER_YIELD_TEST_REDIS_URL (default
                      redis://127.0.0.1:6379): named in --scenarios, the run fails at start
                      without them; in the default list they are skipped with a notice. Without
                      pgbench (PGBENCH or PATH) its rows are left out with how to install it
  --pgbench-clients n pgbench's connections (default 16)
  --rounds n          alternating rounds per scenario (default 5)
  --duration s        seconds per measured run (default 6)
  --warmup s          seconds of warm-up per server before the rounds (default 2)
  --connections n     the load generator's connections (default 50)
  --pipelining n      requests in flight per connection (default 1; autocannon only)
  --loader name       autocannon (default: in this process, JavaScript) or wrk (Debian's wrk, C,
                      a child process, as many threads as cores that divide the connections
                      evenly; WRK or PATH): the load generator of every run. pgbench, the POST's
                      yardstick, drives PostgreSQL from a C client; with wrk the POST's client is
                      as light as pgbench's, where autocannon's takes a large share of a 2-core
                      machine. wrk's p50/p99 come from its own histogram (every answer, with its
                      correction for coordinated omission), autocannon's are exact over the 2xx
                      answers: compare p99 within one loader. wrk counts statuses >= 400 as bad
  --quick             2 rounds x 3 s, 1 s warm-up
  --profile dir       our server runs with --cpu-prof, profiles written to dir (see profile-summary.ts)
  --perf-map          our servers run with node's --perf-basic-prof: V8 writes /tmp/perf-PID.map, so
                      Linux perf names their JavaScript functions (e.g. \`perf record -e cpu-clock
                      -g -p PID\` during their rounds). Each one's pid and map are printed as it
                      starts; the maps stay for \`perf report\` (delete them after)
  --rss               instead of the table: RSS of our server over a sustained GET product load,
                      then of the bare server under the same load (read every 100 ms; the spread
                      at the 10 s slices' ends, of all readings, and of the slices' highest)
  --rss-seconds n     length of each load after warm-up (default 180), in 10 s slices
  --scaling kind      instead of the table: products (GET product with 1..10,000 products in the
                      fixtures) or events (signed POST with 1k..1M events already stored)
  --sizes a,b,...     sizes of the scaling run (default products 1,100,1000,10000; events
                      1000,10000,100000,1000000)
  --baseline dir      also run the server of another checkout (built), e.g. the code before a change,
                      as "partner-yield (baseline)" in the same alternating rounds (for post-pg, on
                      the same database)
  --calibrate a,b     also run the bare server with a µs of busy work before each answer (then b,
                      …), one row each, in the same rounds: what that much handler CPU costs in
                      req/s and p99 on this machine, a yardstick for our rows (e.g. 2,5,10)
  --batched-bare      also run the bare server answering the requests of each event-loop turn
                      together after that turn's reads (setImmediate), as our listener hands them
                      to the core: how much of our gain from that is node's own
  --durable-bare      with post-pg: also run the bare server committing each POST's body to
                      PostgreSQL before it answers (a table like pgbench's insert's, group commit
                      as our event store does it: one multi-row insert in flight, at most 64
                      bodies), in post-pg's rounds: how close a node:http server on pg comes to
                      pgbench's insert when it does nothing else (no target)
  --port-base n       first port to use (default 21100)
`;

const flags = parseFlags("bench:http", HELP, {
  scenarios: { type: "string" },
  rounds: { type: "string" },
  duration: { type: "string" },
  warmup: { type: "string" },
  connections: { type: "string" },
  pipelining: { type: "string" },
  quick: { type: "boolean" },
  profile: { type: "string" },
  "perf-map": { type: "boolean" },
  "port-base": { type: "string" },
  baseline: { type: "string" },
  rss: { type: "boolean" },
  scaling: { type: "string" },
  sizes: { type: "string" },
  "rss-seconds": { type: "string" },
  calibrate: { type: "string" },
  "batched-bare": { type: "boolean" },
  "durable-bare": { type: "boolean" },
  "pgbench-clients": { type: "string" },
  loader: { type: "string" },
});
const positive = intFlagOf("bench:http");
/** A positive integer flag (at most 10 million). */
function intFlag(value: string | undefined, fallback: number, name: string): number {
  return positive(name, value, fallback, 1, 10_000_000);
}

const quick = flags.quick === true;
const settings = {
  rounds: intFlag(flags.rounds, quick ? 2 : 5, "rounds"),
  duration: intFlag(flags.duration, quick ? 3 : 6, "duration"),
  warmup: intFlag(flags.warmup, quick ? 1 : 2, "warmup"),
  connections: intFlag(flags.connections, 50, "connections"),
  pipelining: intFlag(flags.pipelining, 1, "pipelining"),
};
let nextPort = intFlag(flags["port-base"], 21100, "port-base");
const pgbenchClients = intFlag(flags["pgbench-clients"], 16, "pgbench-clients");
const loaderName = flags.loader ?? "autocannon";
if (loaderName !== "autocannon" && loaderName !== "wrk") {
  usageError("bench:http", `--loader must be autocannon or wrk (got ${JSON.stringify(loaderName)})`);
}
if (loaderName === "wrk" && settings.pipelining !== 1) {
  usageError("bench:http", "--pipelining is autocannon's: it does not go with --loader wrk");
}
/** With --loader wrk, the wrk to run (found in main, before anything starts); else undefined. */
let wrkBin: string | undefined;
/** wrk's threads: each opens connections / threads of them, so a number that divides them. */
const wrkThreads = threadsFor(settings.connections, cpus().length);
/** Clock ticks a second, for the children's CPU in /proc/self/stat. */
const TICKS = clockTicks();

/** Microseconds of busy work of the `--calibrate` rows (bare server + work). */
const calibration = (flags.calibrate?.split(",") ?? []).map((us) => positive("calibrate", us, 1, 1, 100_000));

// ---- requests ------------------------------------------------------------------------------

const SLUG = "usdc-base-prime";
const EVENT_BODY = JSON.stringify({
  event_type: "partner.user.created",
  occurred_at: "2026-11-20T10:15:00Z",
  data: { blob: "x".repeat(940) },
});
const SIGNATURE = signBody(DEMO.signingSecret, new TextEncoder().encode(EVENT_BODY));
const runTag = `${process.pid.toString(36)}${Date.now().toString(36)}`;
let idempotencyCounter = 0;
const nextIdempotencyKey = () => `bench-${runTag}-${(idempotencyCounter++).toString(36)}`;
/** wrk runs so far: each run's fresh header values start with its own tag. */
let wrkRuns = 0;

interface RequestShape {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  /** A header that must change per request (a new Idempotency-Key each time). */
  readonly freshHeader?: string;
}

const auth = { "x-api-key": DEMO.sandboxApiKey };
const REQUESTS: Record<string, RequestShape> = {
  product: { method: "GET", path: `/api/partner/products/${SLUG}`, headers: auth },
  healthz: { method: "GET", path: "/healthz", headers: {} },
  "yield-calc": {
    method: "GET",
    path: `/api/partner/products/${SLUG}/yield-calc?amount=123456.789`,
    headers: auth,
  },
  position: {
    method: "GET",
    path: `/api/partner/products/${SLUG}/position?address=${DEMO.walletWithPositions}`,
    headers: auth,
  },
  post: {
    method: "POST",
    path: "/api/partner/webhooks/inbound",
    headers: {
      ...auth,
      "content-type": "application/json",
      "x-partner-event": "partner.user.created",
      "x-partner-signature": `sha256=${SIGNATURE}`,
    },
    body: EVENT_BODY,
    freshHeader: "idempotency-key",
  },
};

/** Scenarios that run our server on PostgreSQL and Redis: the request's name + "-pg". */
const PG_SCENARIOS = ["product-pg", "yield-calc-pg", "position-pg", "post-pg"];
const ALL = ["product", "product-nolog", "healthz", "yield-calc", "position", "post", ...PG_SCENARIOS];
const PG_REQUESTS = new Set(PG_SCENARIOS.map((name) => name.slice(0, -"-pg".length)));
const SCENARIOS =
  flags.scenarios === undefined
    ? ALL
    : [...new Set(flags.scenarios.split(",").flatMap((name) => (name === "pg" ? PG_SCENARIOS : [name])))];

interface ScenarioName {
  /** The key of REQUESTS. */
  readonly request: string;
  /** Our server on PostgreSQL and Redis. */
  readonly pg: boolean;
  /** Our server with --log none (always on PostgreSQL). */
  readonly nolog: boolean;
}

function parseScenario(name: string): ScenarioName | undefined {
  const m = /^(.+?)(-pg|-nolog)?$/.exec(name);
  if (m === null || REQUESTS[m[1]!] === undefined) return undefined;
  const pg = m[2] === "-pg";
  if (pg && !PG_REQUESTS.has(m[1]!)) return undefined;
  return { request: m[1]!, pg, nolog: m[2] !== undefined };
}
for (const name of SCENARIOS) {
  if (parseScenario(name) === undefined) {
    usageError("bench:http", `unknown scenario ${JSON.stringify(name)} in --scenarios`);
  }
}
if (flags.scaling !== undefined && flags.scaling !== "products" && flags.scaling !== "events") {
  usageError("bench:http", `--scaling must be products or events (got ${JSON.stringify(flags.scaling)})`);
}
// Flags that add rows to the table, which --rss and --scaling do not print.
for (const [given, what] of [
  [calibration.length > 0, "--calibrate adds rows"],
  [flags["batched-bare"] === true, "--batched-bare adds a row"],
  [flags["durable-bare"] === true, "--durable-bare adds a row"],
] as const) {
  if (given && (flags.scaling !== undefined || flags.rss === true)) {
    usageError("bench:http", `${what} to the table: it does not go with --rss or --scaling`);
  }
}
if (flags["durable-bare"] === true && !SCENARIOS.includes("post-pg")) {
  usageError(
    "bench:http",
    "--durable-bare adds a row to post-pg's rounds: name post-pg (or pg) in --scenarios",
  );
}

// ---- servers -------------------------------------------------------------------------------

interface Stats {
  readonly cpuMicros: number;
  readonly rss: number;
  /** With BENCH_RSS_SAMPLE: the lowest and highest RSS of the 100 ms readings since the last stats. */
  readonly rssLow: number | null;
  readonly rssHigh: number;
}

class ServerChild {
  /** Every child not yet stopped, for the signal handler. */
  static readonly running = new Set<ServerChild>();
  readonly #child: ChildProcess;
  readonly #waiters: ((s: Stats) => void)[] = [];

  constructor(
    readonly name: string,
    readonly port: number,
    args: string[],
    env: Record<string, string> = {},
  ) {
    // stdout (the request log) goes to /dev/null: every line still costs its write.
    const sink = openSync("/dev/null", "w");
    this.#child = spawn(process.execPath, args, {
      cwd: ROOT,
      // Without the runner's NODE_OPTIONS (the source condition would load TypeScript).
      env: { ...withoutNodeOptions(process.env), ...env },
      stdio: ["ignore", sink, "inherit", "ipc"],
    });
    this.#child.on("message", (m: { type: string } & Stats) => {
      if (m.type === "stats") this.#waiters.shift()?.(m);
    });
    // A send to a child that has just gone: reported by the send's callback, not a crash.
    this.#child.on("error", () => {});
    ServerChild.running.add(this);
    this.#child.once("exit", () => ServerChild.running.delete(this));
  }

  get exitCode(): number | null {
    return this.#child.exitCode;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  stats(): Promise<Stats> {
    return new Promise((resolve, reject) => {
      if (!this.#child.connected) {
        reject(new Error(`${this.name} is gone (exit code ${this.#child.exitCode})`));
        return;
      }
      this.#waiters.push(resolve);
      this.#child.send({ type: "stats" }, (error) => {
        if (error !== null) reject(new Error(`${this.name}: ${error.message}`));
      });
    });
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once("exit", resolve));
    if (this.#child.connected) this.#child.send({ type: "exit" }, () => {});
    else this.#child.kill("SIGTERM");
    await Promise.race([exited, delay(5000)]);
    if (this.#child.exitCode === null) this.#child.kill("SIGKILL");
  }
}

/**
 * Every server runs as plain JavaScript, as shipped: ours from the packages' `dist/` (brought up to
 * date here with an incremental `tsc -b`), the comparison servers and the probe transpiled by
 * TypeScript into bench/http/.build/ (tsx would wrap every closure in a naming helper, a
 * per-request cost no deployment pays).
 */
async function prepare(): Promise<string> {
  buildCli();
  // Loaded here, not at the top: importing TypeScript is the slowest part of this script's start,
  // which --help and a usage error need not pay.
  const { default: ts } = await import("typescript");
  const out = join(HERE, ".build");
  mkdirSync(join(out, "servers"), { recursive: true });
  const files = ["probe.ts", ...readdirSync(join(HERE, "servers")).map((f) => `servers/${f}`)];
  for (const file of files) {
    const js = ts.transpileModule(readFileSync(join(HERE, file), "utf8"), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(join(out, file.replace(/\.ts$/, ".js")), js);
  }
  return out;
}
// Set by main (after the PostgreSQL check, which fails faster than a build).
let BUILD = "";
let NODE_ARGS: string[] = [];

function profileArgs(name: string): string[] {
  return flags.profile === undefined
    ? []
    : ["--cpu-prof", "--cpu-prof-dir", flags.profile, "--cpu-prof-name", `${name}.cpuprofile`];
}

/**
 * With --perf-map: V8's perf map of the process's compiled code. The flag also opens V8's own log,
 * an `isolate-…-v8.log` in the working directory unless sent elsewhere: here, nowhere.
 */
function perfMapArgs(): string[] {
  return flags["perf-map"] === true ? ["--perf-basic-prof", `--logfile=${devNull}`] : [];
}

/**
 * Our server; `databaseUrl` puts its stores on PostgreSQL (no in-memory bounds then: the CLI
 * refuses --max-events with --database-url).
 */
function startOurs(
  name: string,
  extra: string[] = [],
  root = ROOT,
  databaseUrl?: string,
  env: Record<string, string> = {},
): ServerChild {
  const port = nextPort++;
  const args = [
    ...profileArgs(name),
    ...perfMapArgs(),
    ...NODE_ARGS,
    cliBin(root),
    "serve",
    "--port",
    String(port),
    "--rate-limit-quota",
    "1000000000",
    // The in-memory event store's bounds (256 MiB by default) are out of the way of the POST runs,
    // which store every event; a checkout from before the bounds (--baseline) has no such flags.
    ...(databaseUrl !== undefined
      ? ["--database-url", databaseUrl]
      : hasEventBounds(root)
        ? ["--max-events", "1000000000", "--max-event-bytes", String(8 * 1024 ** 3)]
        : []),
    ...extra,
  ];
  const server = new ServerChild(name, port, args, env);
  if (flags["perf-map"] === true) {
    console.error(`perf map: ${name} is pid ${server.pid} (/tmp/perf-${server.pid}.map)`);
  }
  return server;
}

/** Whether the built CLI of a checkout takes `--max-events` (added with the in-memory bounds). */
function hasEventBounds(root: string): boolean {
  if (root === ROOT) return true;
  // The CLI's options are in the server package, or in the node adapter before it.
  return ["packages/server", "packages/node-adapter"].some((dir) => {
    const options = join(root, dir, "dist/cli-options.js");
    return existsSync(options) && readFileSync(options, "utf8").includes('"max-events"');
  });
}

function startComparison(
  name: string,
  file: string,
  spec: Omit<ServerSpec, "port">,
  env: Record<string, string> = {},
): ServerChild {
  const port = nextPort++;
  return new ServerChild(name, port, [...NODE_ARGS, join(BUILD, "servers", file.replace(/\.ts$/, ".js"))], {
    ...env,
    BENCH_SPEC: JSON.stringify({ ...spec, port }),
  });
}

async function waitReady(server: ServerChild): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    if (server.exitCode !== null)
      throw new Error(`${server.name} exited (code ${server.exitCode}) before it answered`);
    try {
      await fetch(`http://127.0.0.1:${server.port}/`, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await delay(200);
    }
  }
  throw new Error(`${server.name} did not start on port ${server.port}`);
}

const DROPPED = new Set(["date", "connection", "keep-alive", "content-length"]);

async function capture(server: ServerChild, shape: RequestShape): Promise<CapturedResponse> {
  const res = await fetch(`http://127.0.0.1:${server.port}${shape.path}`, {
    method: shape.method,
    headers: { ...shape.headers, ...freshHeaders(shape) },
    ...(shape.body === undefined ? {} : { body: shape.body }),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!DROPPED.has(name)) headers[name] = value;
  });
  const body = await res.text();
  if (res.status >= 300) throw new Error(`${shape.method} ${shape.path}: ${res.status} ${body}`);
  return { status: res.status, headers, body };
}

// ---- load ----------------------------------------------------------------------------------

/** One load run, as the server and the load generator saw it. */
interface RunSample {
  /** Requests answered in the run. */
  readonly total: number;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuPerRequest: number;
  readonly rss: number;
  /** The lowest and highest of the 100 ms RSS readings during the run (BENCH_RSS_SAMPLE only). */
  readonly rssLow: number;
  readonly rssHigh: number;
  readonly bad: number;
}

/** A run of the comparison table: also what the whole machine and the load generator spent. */
interface Sample extends RunSample {
  /** The whole machine's busy CPU (every process and the kernel) per request (per transaction). */
  readonly machineCpuPerRequest: number;
  /** The share of the cores' time they were busy during the run, 0-1. */
  readonly machineBusy: number;
  /** Of machineBusy, the share the hypervisor stole (steal in /proc/stat), 0-1. */
  readonly machineStolen: number;
  /**
   * The load generator's CPU per request: this process's (autocannon's) plus its finished children's
   * (wrk's); NaN for a pgbench run, whose client's CPU only the machine's holds.
   */
  readonly loaderCpuPerRequest: number;
}

/**
 * The latency of every 2xx answer of a run, in milliseconds as autocannon times it (hrtime). Its own
 * histogram keeps whole milliseconds only, and at 3-7 ms one step is 14-33 % of the value: too
 * coarse for a 1.15x target. Percentiles here are by nearest rank over the exact times.
 */
class Latencies {
  #times = new Float64Array(1 << 16);
  #count = 0;

  record(ms: number): void {
    if (this.#count === this.#times.length) {
      const grown = new Float64Array(2 * this.#times.length);
      grown.set(this.#times);
      this.#times = grown;
    }
    this.#times[this.#count++] = ms;
  }

  /** The `p`-th percentile (0 < p <= 100) by nearest rank; 0 when nothing was recorded. */
  percentiles(...ps: number[]): number[] {
    const sorted = this.#times.subarray(0, this.#count).sort();
    return ps.map((p) => (this.#count === 0 ? 0 : sorted[Math.ceil((p / 100) * this.#count) - 1]!));
  }
}

/** The shape's fresh header with a new value (autocannon's runs and the answer captured first). */
function freshHeaders(shape: RequestShape): Record<string, string> {
  return shape.freshHeader === undefined ? {} : { [shape.freshHeader]: nextIdempotencyKey() };
}

function runAutocannon(options: autocannon.Options, latencies: Latencies): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error: unknown, result: autocannon.Result) => {
      if (error !== null && error !== undefined) reject(error);
      else resolve(result);
    });
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) latencies.record(ms);
    });
  });
}

async function load(server: ServerChild, shape: RequestShape, seconds: number): Promise<RunSample> {
  return wrkBin === undefined
    ? loadWithAutocannon(server, shape, seconds)
    : loadWithWrk(server, shape, seconds);
}

async function loadWithWrk(server: ServerChild, shape: RequestShape, seconds: number): Promise<RunSample> {
  const before = await server.stats();
  const tag = `bench-${runTag}-w${(wrkRuns++).toString(36)}`;
  const r = await runWrk(wrkBin!, server.port, shape, settings.connections, wrkThreads, seconds, tag);
  const after = await server.stats();
  return {
    ...serverSide(before, after, r.total),
    reqPerSec: r.total / r.seconds,
    p50: r.p50,
    p99: r.p99,
    bad: r.bad,
  };
}

/** What the server's stats say of a run that answered `total` requests. */
function serverSide(
  before: Stats,
  after: Stats,
  total: number,
): Pick<RunSample, "total" | "cpuPerRequest" | "rss" | "rssLow" | "rssHigh"> {
  return {
    total,
    cpuPerRequest: (after.cpuMicros - before.cpuMicros) / Math.max(1, total),
    rss: after.rss,
    rssLow: after.rssLow ?? after.rss,
    rssHigh: Math.max(after.rssHigh, after.rss),
  };
}

async function loadWithAutocannon(
  server: ServerChild,
  shape: RequestShape,
  seconds: number,
): Promise<RunSample> {
  const before = await server.stats();
  const latencies = new Latencies();
  const result = await runAutocannon(
    {
      url: `http://127.0.0.1:${server.port}`,
      connections: settings.connections,
      pipelining: settings.pipelining,
      duration: seconds,
      requests: [
        {
          method: shape.method,
          path: shape.path,
          headers: shape.headers,
          ...(shape.body === undefined ? {} : { body: shape.body }),
          ...(shape.freshHeader === undefined
            ? {}
            : {
                setupRequest: (req: autocannon.Request) => ({
                  ...req,
                  headers: { ...shape.headers, ...freshHeaders(shape) },
                }),
              }),
        },
      ],
    },
    latencies,
  );
  const after = await server.stats();
  const total = result.requests.total;
  const [p50, p99] = latencies.percentiles(50, 99);
  return {
    ...serverSide(before, after, total),
    reqPerSec: total / seconds,
    p50: p50!,
    p99: p99!,
    bad: result.non2xx + result.errors + result.timeouts,
  };
}

// ---- the comparison table -----------------------------------------------------------------

interface Contender {
  readonly label: string;
  /** The server loaded with autocannon or wrk; undefined for a pgbench row. */
  readonly server?: ServerChild;
  /** A pgbench row: this workload run on the bench database instead of an HTTP load. */
  readonly pgbench?: PgbenchWorkload;
  /** The scenario its rows name. */
  readonly scenario: string;
  /** Our server on PostgreSQL, or pgbench: PostgreSQL's own CPU is read around its runs. */
  readonly pg?: boolean;
  /** For a PostgreSQL contender: the same server in memory, when in the same group. */
  readonly inMemory?: Contender | undefined;
  /** Another checkout's server (--baseline): not judged against the targets. */
  readonly baseline?: boolean;
}

/** What the PostgreSQL rows run on: the bench database, its Redis prefix, pgbench if found. */
interface PgSetup {
  readonly database: BenchDatabase;
  readonly redis: BenchRedis;
  /** The pgbench to run; undefined when it is not installed (its rows are left out). */
  readonly pgbench: string | undefined;
}

/** A number with `digits` decimals, or "–" when it was not measured (NaN). */
function cellOf(value: number, digits: number): string {
  return Number.isNaN(value) ? "–" : value.toFixed(digits);
}

/** /proc/stat's reader; undefined off Linux (the machine table then says so). */
const readMachine = machineCpuReader();

/** One run of a contender, with what the whole machine and the load generator spent on it. */
async function measure(c: Contender, shape: RequestShape, seconds: number, setup?: PgSetup): Promise<Sample> {
  const machineBefore = readMachine?.();
  const loaderBefore = process.cpuUsage();
  // wrk's CPU: a child's, counted once it has exited (none for autocannon, in this process).
  const childrenBefore = wrkBin === undefined ? 0 : childrenCpuMicros(TICKS);
  const sample = await measureAlone(c, shape, seconds, setup);
  const loader = process.cpuUsage(loaderBefore);
  const children = wrkBin === undefined ? 0 : childrenCpuMicros(TICKS) - childrenBefore;
  const machine = machineBefore === undefined ? undefined : machineCpuSince(machineBefore, readMachine!());
  const n = Math.max(1, sample.total);
  return {
    ...sample,
    machineCpuPerRequest: machine === undefined ? Number.NaN : machine.busy / n,
    machineBusy: machine?.share ?? Number.NaN,
    machineStolen: machine?.stolen ?? Number.NaN,
    loaderCpuPerRequest: c.pgbench === undefined ? (loader.user + loader.system + children) / n : Number.NaN,
  };
}

/** One measured run of a contender: a load of its server, or a pgbench run. */
async function measureAlone(
  c: Contender,
  shape: RequestShape,
  seconds: number,
  setup?: PgSetup,
): Promise<RunSample> {
  if (c.pgbench === undefined) return load(c.server!, shape, seconds);
  const r = await runPgbench(setup!.pgbench!, setup!.database.url, c.pgbench, pgbenchClients, seconds);
  return {
    total: r.total,
    reqPerSec: r.tps,
    p50: r.p50,
    p99: r.p99,
    // Not a server of ours: no server CPU or RSS (PostgreSQL's own CPU is in the second table).
    cpuPerRequest: Number.NaN,
    rss: Number.NaN,
    rssLow: Number.NaN,
    rssHigh: Number.NaN,
    bad: r.failed,
  };
}

/**
 * The scenarios in groups of one bare server and the same alternating rounds: `X-nolog` and `X-pg`
 * form one group, and an `X-pg` always has its in-memory twin `X-nolog` beside it.
 */
function groupsOf(names: readonly string[]): string[][] {
  const out: string[][] = [];
  const byKey = new Map<string, string[]>();
  for (const name of names) {
    const p = parseScenario(name)!;
    const key = `${p.request}${p.nolog ? "-nolog" : ""}`;
    const group = byKey.get(key);
    if (group === undefined) {
      const fresh = [name];
      byKey.set(key, fresh);
      out.push(fresh);
    } else if (!group.includes(name)) {
      group.push(name);
    }
  }
  for (const group of out) {
    const p = parseScenario(group[0]!)!;
    const twin = `${p.request}-nolog`;
    if (group.some((n) => parseScenario(n)!.pg) && !group.includes(twin)) group.push(twin);
  }
  // In memory first: its answer is the one the bare server gives.
  for (const group of out) group.sort((a, b) => Number(parseScenario(a)!.pg) - Number(parseScenario(b)!.pg));
  return out;
}

/**
 * Starts a group's servers: bare first (the baseline); `yardsticks`, pgbench workloads run in the
 * group's rounds.
 */
async function startGroup(
  names: readonly string[],
  setup: PgSetup | undefined,
  yardsticks: readonly PgbenchWorkload[],
): Promise<Contender[]> {
  const parsed = names.map((name) => ({ name, ...parseScenario(name)! }));
  const { request, nolog } = parsed[0]!;
  const shape = REQUESTS[request]!;
  const logFlags = nolog ? ["--log", "none"] : [];
  const ours: Contender[] = [];
  for (const p of parsed) {
    const url = p.pg ? setup!.database.url : undefined;
    const extra = p.pg
      ? [...logFlags, "--redis-url", setup!.redis.url, "--redis-key-prefix", setup!.redis.prefix]
      : logFlags;
    const label = `partner-yield${p.pg ? " on PostgreSQL + Redis" : ""}${nolog ? " --log none" : ""}`;
    const inMemory = p.pg ? ours.find((c) => !c.pg && c.baseline !== true) : undefined;
    ours.push({
      label,
      scenario: p.name,
      pg: p.pg,
      inMemory,
      server: startOurs(`ours-${p.name}`, extra, ROOT, url),
    });
    if (flags.baseline !== undefined) {
      const baselineInMemory = p.pg ? ours.find((c) => !c.pg && c.baseline === true) : undefined;
      ours.push({
        label: `${label} (baseline)`,
        scenario: p.name,
        pg: p.pg,
        inMemory: baselineInMemory,
        baseline: true,
        server: startOurs(`baseline-${p.name}`, extra, flags.baseline, url),
      });
    }
  }
  let response: CapturedResponse | undefined;
  for (const c of ours) {
    await waitReady(c.server!);
    // Each of ours must answer the request (2xx); the bare server gives the first answer.
    const answer = await capture(c.server!, shape);
    response ??= answer;
  }
  const spec = { response: response!, readsBody: shape.body !== undefined, apiKey: DEMO.sandboxApiKey };
  const contenders: Contender[] = [
    { label: "bare node:http", scenario: names.join(", "), server: startComparison("bare", "bare.ts", spec) },
    ...ours,
  ];
  for (const yardstick of yardsticks) {
    contenders.push({ label: yardstick.label, scenario: "pgbench", pg: true, pgbench: yardstick });
  }
  const postPg = parsed.find((p) => p.pg && p.request === "post");
  if (flags["durable-bare"] === true && postPg !== undefined) {
    contenders.push({
      label: DURABLE_BARE,
      scenario: postPg.name,
      pg: true,
      server: startComparison("bare-durable", "bare.ts", {
        ...spec,
        durable: { databaseUrl: setup!.database.url, pgModule: PG_MODULE },
      }),
    });
  }
  if (flags["batched-bare"] === true) {
    contenders.push({
      label: "bare node:http, batched",
      scenario: names[0]!,
      server: startComparison("bare-batched", "bare.ts", { ...spec, batched: true }),
    });
  }
  for (const us of calibration) {
    contenders.push({
      label: `bare node:http + ${us} µs work`,
      scenario: names[0]!,
      server: startComparison(`bare-work-${us}`, "bare.ts", { ...spec, workMicros: us }),
    });
  }
  if (request === "product" && !nolog) {
    contenders.push({
      label: "fastify",
      scenario: names[0]!,
      server: startComparison("fastify", "fastify.ts", spec),
    });
    contenders.push({ label: "hono", scenario: names[0]!, server: startComparison("hono", "hono.ts", spec) });
  }
  for (const c of contenders) if (c.server !== undefined) await waitReady(c.server);
  return contenders;
}

/** PostgreSQL's CPU during one run of a PostgreSQL contender, per request. */
interface PgSample {
  readonly own: number;
  readonly background: number;
  /** Whether any process of the bench database was seen (false: PostgreSQL is not on this machine). */
  readonly seen: boolean;
}

/** The targets of issue 28: req/s of each GET on PostgreSQL + Redis against its in-memory twin. */
const RPS_TARGETS: Readonly<Record<string, number>> = { product: 0.7, "yield-calc": 0.7, position: 0.5 };
/** A GET's p99 and server CPU per request on PostgreSQL + Redis: at most this times the twin's. */
const GET_P99_TARGET = 2;
const GET_CPU_TARGET = 2;
/** The signed POST on PostgreSQL: at least this times pgbench's single-row insert rate. */
const POST_PGBENCH_TARGET = 0.5;

/** The `--durable-bare` row's server. */
const DURABLE_BARE = "bare node:http + PostgreSQL group commit";

/**
 * The pgbench yardsticks of each group: the key lookup in the first group with a GET on
 * PostgreSQL; in the group of `post-pg` the insert (its target's yardstick), the same insert
 * without the flush wait (no target: how much of the first is the disk) and our event row one a
 * transaction (no target: what PostgreSQL's single-row commits reach with our row).
 */
function yardsticksOf(
  groups: readonly string[][],
  setup: PgSetup | undefined,
): Map<string[], PgbenchWorkload[]> {
  const out = new Map<string[], PgbenchWorkload[]>();
  if (setup?.pgbench === undefined) return out;
  const pgRequest = (group: readonly string[]) =>
    group.map((n) => parseScenario(n)!).find((p) => p.pg)?.request;
  const lookupGroup = groups.find((g) => pgRequest(g) !== undefined && pgRequest(g) !== "post");
  if (lookupGroup !== undefined) out.set(lookupGroup, [keyLookup(DEMO.sandboxApiKey, pgbenchClients)]);
  const insertGroup = groups.find((g) => pgRequest(g) === "post");
  if (insertGroup !== undefined)
    out.set(insertGroup, [
      singleInsert(pgbenchClients),
      insertWithoutFlush(pgbenchClients),
      eventInsert(pgbenchClients, EVENT_BODY, DEMO),
    ]);
  return out;
}

async function runTable(names: string[], setup: PgSetup | undefined, skipped: string[]): Promise<void> {
  header(setup);
  console.log(
    "| scenario | server | req/s | x bare | p50 ms | p99 ms | x bare p99 | CPU µs/req | x bare CPU | RSS MiB | non-2xx/errors |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  const pgRows: string[] = [];
  const machineRows: string[] = [];
  const targetRows: string[] = [];
  let pgUnreadable = false;
  const groups = groupsOf(names);
  const yardsticks = yardsticksOf(groups, setup);
  for (const group of groups) {
    const shape = REQUESTS[parseScenario(group[0]!)!.request]!;
    const contenders = await startGroup(group, setup, yardsticks.get(group) ?? []);
    const readPg =
      setup !== undefined && contenders.some((c) => c.pg) ? pgCpuReader(setup.database.name) : undefined;
    if (setup !== undefined && contenders.some((c) => c.pg) && readPg === undefined) pgUnreadable = true;
    try {
      for (const c of contenders) await measure(c, shape, settings.warmup, setup);
      if (contenders.some((c) => c.pgbench?.name === "event-insert") && setup !== undefined) {
        // A refused call is a transaction to pgbench too: its row would time the refusal.
        if ((await eventInsertsStored(setup.database.url)) === 0)
          throw new Error(
            "pgbench's event insert stored no event in its warm-up: the demo's key or signing secret is not in the bench database",
          );
      }
      const samples = new Map<Contender, Sample[]>(contenders.map((c) => [c, []]));
      const pgSamples = new Map<Contender, PgSample[]>(contenders.map((c) => [c, []]));
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? contenders : [...contenders].reverse();
        for (const c of order) {
          const pgBefore: PgCpuSample | undefined = c.pg === true ? readPg?.() : undefined;
          // pgbench's connections end with it: their time is read every 100 ms while they run.
          const tracker =
            pgBefore !== undefined && c.pgbench !== undefined ? trackPgCpu(readPg!, 100) : undefined;
          const sample = await measure(c, shape, settings.duration, setup);
          samples.get(c)!.push(sample);
          if (pgBefore !== undefined) {
            const after = tracker?.stop() ?? readPg!();
            const spent = pgCpuSince(pgBefore, after);
            const n = Math.max(1, sample.total);
            pgSamples
              .get(c)!
              .push({ own: spent.own / n, background: spent.background / n, seen: after.own.size > 0 });
          }
        }
      }
      const summary = (c: Contender) => {
        const s = samples.get(c)!;
        return {
          rps: median(s.map((x) => x.reqPerSec)),
          p50: median(s.map((x) => x.p50)),
          p99: median(s.map((x) => x.p99)),
          cpu: median(s.map((x) => x.cpuPerRequest)),
          rss: s.at(-1)!.rss,
          bad: s.reduce((n, x) => n + x.bad, 0),
        };
      };
      const base = summary(contenders[0]!);
      // Each round's ratio to another contender's run of the same round (the bare server's, the
      // twin's), then the median: the two runs are minutes closer in time than the rounds' medians
      // are, so the machine's drift (this VM's speed moves by 10-30 % over minutes) cancels out.
      const ratios = (c: Contender, to: Contender, pick: (x: Sample) => number) => {
        const of = samples.get(to)!;
        return samples.get(c)!.map((x, i) => pick(x) / Math.max(pick(of[i]!), 1e-9));
      };
      const ratio = (c: Contender, to: Contender, pick: (x: Sample) => number) => median(ratios(c, to, pick));
      /** The median ratio with the lowest and highest round's in brackets. */
      const spreadOf = (xs: readonly number[]) => spread(xs, (x) => x.toFixed(2), "–");
      const bare = contenders[0]!;
      for (const c of contenders) {
        const m = summary(c);
        const p99Of = (x: Sample) => Math.max(x.p99, 1e-3);
        const cpuOf = (x: Sample) => x.cpuPerRequest;
        if (c.pgbench !== undefined) {
          // Not an HTTP server: no ratio to the bare server, no server CPU or RSS.
          console.log(
            `| ${c.scenario} | ${c.label} | ${Math.round(m.rps)} | – | ${m.p50.toFixed(2)} | ${m.p99.toFixed(2)} | – | – | – | – | ${m.bad} |`,
          );
        } else {
          // The rounds' spread, so a reader sees how far one round's ratio can be from the median.
          const rpsCell = c === bare ? "1.00" : spreadOf(ratios(c, bare, (x) => x.reqPerSec));
          console.log(
            `| ${c.scenario} | ${c.label} | ${Math.round(m.rps)} | ${rpsCell} | ${m.p50.toFixed(2)} | ${m.p99.toFixed(2)} | ${ratio(c, bare, p99Of).toFixed(2)} | ${m.cpu.toFixed(1)} | ${ratio(c, bare, cpuOf).toFixed(2)} | ${(m.rss / 2 ** 20).toFixed(0)} | ${m.bad} |`,
          );
        }
        const runs = samples.get(c)!;
        const loader = median(runs.map((x) => x.loaderCpuPerRequest));
        machineRows.push(
          `| ${c.scenario} | ${c.label} | ${Math.round(m.rps)} | ${cellOf(loader, 1)} | ${cellOf(median(runs.map((x) => x.machineCpuPerRequest)), 1)} | ${cellOf(100 * median(runs.map((x) => x.machineBusy)), 0)} | ${cellOf(100 * median(runs.map((x) => x.machineStolen)), 1)} |`,
        );
        const pg = pgSamples.get(c)!;
        if (pg.length > 0) {
          const server = samples.get(c)!;
          const memory = c.inMemory === undefined ? "–" : (m.rps / summary(c.inMemory).rps).toFixed(2);
          const seen = pg.some((x) => x.seen);
          const cell = (xs: number[]) => (seen ? median(xs).toFixed(1) : "not seen");
          const serverCpu = (x: Sample) => (Number.isNaN(x.cpuPerRequest) ? 0 : x.cpuPerRequest);
          const total = median(server.map((x, i) => serverCpu(x) + pg[i]!.own + pg[i]!.background));
          pgRows.push(
            `| ${c.scenario} | ${c.label} | ${Math.round(m.rps)} | ${memory} | ${c.pgbench === undefined ? m.cpu.toFixed(1) : "–"} | ${cell(pg.map((x) => x.own))} | ${cell(pg.map((x) => x.background))} | ${seen ? total.toFixed(1) : "–"} | ${seen && c.pgbench === undefined ? (total / base.cpu).toFixed(2) : "–"} |`,
          );
        }
        // The targets: ours on PostgreSQL (not a baseline) against its twin of the same rounds.
        const twin = c.inMemory;
        if (c.pg !== true || c.pgbench !== undefined || c.baseline === true || twin === undefined) continue;
        const request = parseScenario(c.scenario)!.request;
        const row = (measured: string, value: string, target: string, met: string) =>
          targetRows.push(`| ${c.scenario} | ${measured} | ${value} | ${target} | ${met} |`);
        const judged = (value: number, ok: boolean) =>
          Number.isFinite(value) ? (ok ? "met" : "NOT met") : "–";
        const p99 = ratio(c, twin, p99Of);
        const cpu = ratio(c, twin, cpuOf);
        if (request === "post") {
          const pgbenchRow = (name: PgbenchWorkload["name"]) =>
            contenders.find((x) => x.pgbench?.name === name);
          const insert = pgbenchRow("insert");
          if (insert === undefined) {
            row(
              "req/s x pgbench single-row insert",
              "–",
              `>= ${POST_PGBENCH_TARGET.toFixed(2)}`,
              "not judged: no pgbench",
            );
          } else {
            const xs = ratios(c, insert, (x) => x.reqPerSec);
            row(
              "req/s x pgbench single-row insert",
              spreadOf(xs),
              `>= ${POST_PGBENCH_TARGET.toFixed(2)}`,
              judged(median(xs), median(xs) >= POST_PGBENCH_TARGET),
            );
          }
          /** A no-target row: `of`'s req/s against `to`'s, round by round (skipped when `to` did not run). */
          const versus = (measured: string, to: Contender | undefined, of: Contender = c) => {
            if (to !== undefined)
              row(measured, spreadOf(ratios(of, to, (x) => x.reqPerSec)), "–", "no target");
          };
          versus(
            "req/s x pgbench's insert without the flush wait (not durable)",
            pgbenchRow("insert-no-flush"),
          );
          versus("req/s x pgbench's insert of our event row, one a transaction", pgbenchRow("event-insert"));
          versus("req/s x in memory", twin);
          const durable = contenders.find((x) => x.label === DURABLE_BARE);
          versus(`req/s x ${DURABLE_BARE}`, durable);
          if (durable !== undefined)
            versus(`${DURABLE_BARE}: req/s x pgbench single-row insert`, insert, durable);
          if (insert !== undefined && readMachine !== undefined) {
            row(
              "machine CPU µs/req x pgbench's per transaction",
              ratio(c, insert, (x) => x.machineCpuPerRequest).toFixed(2),
              "–",
              "no target",
            );
          }
          row("p99 x in memory", p99.toFixed(2), "–", "no target");
          row("server CPU µs/req x in memory", cpu.toFixed(2), "–", "no target");
        } else {
          const xs = ratios(c, twin, (x) => x.reqPerSec);
          const target = RPS_TARGETS[request]!;
          row(
            "req/s x in memory",
            spreadOf(xs),
            `>= ${target.toFixed(2)}`,
            judged(median(xs), median(xs) >= target),
          );
          row(
            "p99 x in memory",
            p99.toFixed(2),
            `<= ${GET_P99_TARGET.toFixed(2)}`,
            judged(p99, p99 <= GET_P99_TARGET),
          );
          row(
            "server CPU µs/req x in memory",
            cpu.toFixed(2),
            `<= ${GET_CPU_TARGET.toFixed(2)}`,
            judged(cpu, cpu <= GET_CPU_TARGET),
          );
        }
      }
    } finally {
      await Promise.all(contenders.map((c) => c.server?.stop()));
    }
  }
  console.log(
    "\nThe whole machine during the runs (every process on it and the kernel, from /proc/stat; medians of " +
      `the rounds): the load generator's CPU (${wrkBin === undefined ? "autocannon, in this process" : "wrk, a child of this process, with this process's own"}; pgbench's client is counted in the ` +
      "machine's only), the machine's busy CPU per request (per transaction for pgbench), and how busy its " +
      `${cpus().length} cores were, of which stolen: the hypervisor ran something else on them (steal; counted ` +
      "in busy and in the machine's CPU; rounds with much of it are noisy ones). At 100 % busy, req/s is at " +
      "most cores x 1,000,000 / machine CPU µs/req.\n",
  );
  if (readMachine === undefined) console.log("not measured: /proc/stat cannot be read on this machine\n");
  console.log(
    "| scenario | server | req/s | load generator CPU µs/req | machine CPU µs/req | machine busy % | of which stolen % |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|");
  for (const row of machineRows) console.log(row);
  if (pgRows.length > 0 || pgUnreadable) {
    console.log(
      "\nPostgreSQL's own CPU (a separate process on the same cores, which the CPU column above, the server " +
        "process's own time, cannot see): utime + stime of its processes from /proc, read before and after " +
        "each run on PostgreSQL (ours, pgbench); medians of the rounds, per request (pgbench: per transaction). " +
        "\"backends\": the processes of the bench's database (its pool's connections, pgbench's, autovacuum); " +
        '"background": postmaster, checkpointer, background writer, walwriter... (server-wide: they also count ' +
        "any other database's load). \"total\": server + backends + background, against the bare server's CPU.\n",
    );
    if (pgUnreadable) console.log("not measured: /proc cannot be read on this machine\n");
    console.log(
      "| scenario | server | req/s | x in memory req/s | server CPU µs/req | PostgreSQL backends µs/req | PostgreSQL background µs/req | total CPU µs/req | x bare CPU |",
    );
    console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (const row of pgRows) console.log(row);
  }
  if (targetRows.length > 0) {
    console.log(
      "\nTargets of issue 28: ours on PostgreSQL + Redis against its in-memory twin (--log none both), each the " +
        "median of the rounds' ratios to the twin's run in the same round (req/s: lowest–highest round in " +
        "brackets); post-pg against pgbench's single-row insert in the same rounds. CPU: the server process's own.\n",
    );
    console.log("| scenario | ratio | measured | target | |");
    console.log("|---|---|---:|---:|---|");
    for (const row of targetRows) console.log(row);
  }
  for (const notice of skipped) console.log(`\n${notice}`);
}

function header(setup?: PgSetup): void {
  const cpu = cpus();
  console.log(
    `machine: ${cpu[0]?.model ?? "?"} x ${cpu.length} cores; node ${process.version}; ` +
      (wrkBin === undefined
        ? `autocannon ${settings.connections} connections, pipelining ${settings.pipelining}; `
        : `wrk (${wrkVersion(wrkBin) ?? "?"}) ${settings.connections} connections, ${wrkThreads} threads; `) +
      `${settings.rounds} alternating rounds x ${settings.duration} s after ${settings.warmup} s warm-up; ` +
      `medians of the rounds; each "x bare" is the median of the rounds' ratios to the bare server's run in the same round (req/s: lowest–highest round in brackets); our server: \`partner-yield serve\` (JSON request log to /dev/null unless --log none, ` +
      `limiter on with --rate-limit-quota 1000000000), in-memory stores with their bounds lifted` +
      (setup === undefined
        ? ""
        : `; "on PostgreSQL + Redis": --log none, --database-url to ${setup.database.name} (a database of this run's own, \`db migrate\` and \`db import-fixtures\`; default pool of 10), --redis-url ${setup.redis.url} with --redis-key-prefix ${setup.redis.prefix}` +
          (setup.pgbench === undefined
            ? ""
            : `; pgbench: ${pgbenchClients} clients, -M prepared, on the same database`)),
  );
}

function withoutNodeOptions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _dropped, ...rest } = env;
  return { ...rest, ...BENCH_SERVER_ENV };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * RSS over time: our server under GET product load for `seconds` (after the warm-up), in 10 s
 * slices; then the bare server (answering our captured bytes) the same way, as the yardstick of
 * what node:http itself does under this load. The target: flat within 10 % after warm-up.
 *
 * Each server reads its RSS every 100 ms (the probe's BENCH_RSS_SAMPLE). Three spreads come out
 * (max - min over min): the readings at the slices' ends (one point each, wherever the collector's
 * saw-tooth happens to be), every 100 ms reading (the saw-tooth's full height), and the slices'
 * highest readings (the saw-tooth's top: whether it climbs). The last third's mean against the
 * first third's, at the slices' ends, is the growth.
 */
async function runRss(seconds: number): Promise<void> {
  header();
  const shape = REQUESTS["product"]!;
  const sampling = { BENCH_RSS_SAMPLE: "1" };
  const ours = startOurs("ours-rss", [], ROOT, undefined, sampling);
  await waitReady(ours);
  const response = await capture(ours, shape);
  const bare = startComparison(
    "bare-rss",
    "bare.ts",
    { response, readsBody: false, apiKey: DEMO.sandboxApiKey },
    sampling,
  );
  await waitReady(bare);
  const summaries: string[] = [];
  try {
    for (const [label, server] of [
      ["partner-yield", ours],
      ["bare node:http", bare],
    ] as const) {
      await load(server, shape, Math.max(settings.warmup, 10));
      const warm = await server.stats();
      console.log(`\n${label}: RSS after warm-up ${mib(warm.rss)} MiB\n`);
      console.log("| seconds | req/s | CPU µs/req | RSS MiB at the end | lowest | highest |");
      console.log("|---:|---:|---:|---:|---:|---:|");
      const slices: RunSample[] = [];
      for (let t = 10; t <= seconds; t += 10) {
        const s = await load(server, shape, 10);
        slices.push(s);
        console.log(
          `| ${t} | ${Math.round(s.reqPerSec)} | ${s.cpuPerRequest.toFixed(1)} | ${mib(s.rss)} | ${mib(s.rssLow)} | ${mib(s.rssHigh)} |`,
        );
      }
      summaries.push(rssSummary(label, slices));
    }
    console.log(`\n${summaries.join("\n")}`);
  } finally {
    await Promise.all([ours.stop(), bare.stop()]);
  }
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

/** The spreads and growth of one server's slices (see runRss). */
function rssSummary(label: string, slices: readonly RunSample[]): string {
  const range = (xs: readonly number[]) => {
    const min = Math.min(...xs);
    const max = Math.max(...xs);
    return `${mib(min)}-${mib(max)} MiB, ${((100 * (max - min)) / min).toFixed(1)} %`;
  };
  const ends = slices.map((s) => s.rss);
  const third = Math.max(1, Math.floor(ends.length / 3));
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const growth = (100 * (mean(ends.slice(-third)) - mean(ends.slice(0, third)))) / mean(ends.slice(0, third));
  return [
    `${label}:`,
    `  at the slices' ends: ${range(ends)} (target <= 10 %)`,
    `  every 100 ms reading: ${range([...slices.map((s) => s.rssLow), ...slices.map((s) => s.rssHigh)])}`,
    `  the slices' highest readings: ${range(slices.map((s) => s.rssHigh))}`,
    `  growth, last third's mean at the slices' ends over the first third's: ${growth >= 0 ? "+" : ""}${growth.toFixed(1)} %`,
  ].join("\n");
}

/**
 * Cost per request against the size of the data: one server per size, all loaded in the same
 * alternating rounds; the ratio is to the smallest size.
 */
async function runScaling(kind: "products" | "events"): Promise<void> {
  const sizes = (flags.sizes ?? (kind === "products" ? "1,100,1000,10000" : "1000,10000,100000,1000000"))
    .split(",")
    .map((s) => intFlag(s, 1, "sizes"));
  header();
  const runs: { size: number; server: ServerChild; shape: RequestShape }[] = [];
  try {
    for (const size of sizes) {
      if (kind === "products") {
        const { dir, lastSlug, total } = productFixtures(size);
        const server = startOurs(`ours-products-${size}`, ["--fixtures", dir]);
        runs.push({
          size: total,
          server,
          shape: { ...REQUESTS["product"]!, path: `/api/partner/products/${lastSlug}` },
        });
      } else {
        const port = nextPort++;
        const server = new ServerChild(
          `events-${size}`,
          port,
          [...NODE_ARGS, join(BUILD, "servers/events-server.js")],
          {
            BENCH_SPEC: JSON.stringify({ port, prefill: size }),
          },
        );
        runs.push({ size, server, shape: REQUESTS["post"]! });
      }
      await waitReady(runs.at(-1)!.server);
    }
    for (const r of runs) await load(r.server, r.shape, settings.warmup);
    const samples = new Map(runs.map((r) => [r, [] as RunSample[]]));
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? runs : [...runs].reverse();
      for (const r of order) samples.get(r)!.push(await load(r.server, r.shape, settings.duration));
    }
    console.log(
      `| ${kind === "products" ? "products in the fixtures (GET the last)" : "events stored before (signed POST, new key each)"} | req/s | p99 ms | CPU µs/req | x smallest CPU | RSS MiB | non-2xx/errors |`,
    );
    console.log("|---:|---:|---:|---:|---:|---:|---:|");
    let first: number | undefined;
    for (const r of runs) {
      const s = samples.get(r)!;
      const cpu = median(s.map((x) => x.cpuPerRequest));
      first ??= cpu;
      console.log(
        `| ${r.size.toLocaleString("en-US")} | ${Math.round(median(s.map((x) => x.reqPerSec)))} | ${median(s.map((x) => x.p99)).toFixed(2)} | ${cpu.toFixed(1)} | ${(cpu / first).toFixed(2)} | ${(s.at(-1)!.rss / 2 ** 20).toFixed(0)} | ${s.reduce((n, x) => n + x.bad, 0)} |`,
      );
    }
  } finally {
    await Promise.all(runs.map((r) => r.server.stop()));
  }
}

/** The bench's Redis prefix while the run holds one, for the signal handler. */
let liveRedis: BenchRedis | undefined;

// Ctrl-C (or a SIGTERM) stops the servers, drops the bench database and clears the Redis prefix.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    process.stderr.write(
      `bench:http: ${signal}: stopping the servers and dropping the bench database, if any\n`,
    );
    // At most 5 s for their shutdown, then the rest are killed; then the database goes.
    Promise.all([...ServerChild.running].map((server) => server.stop()))
      .then(() => Promise.all([dropLiveDatabases(), liveRedis?.clear()]))
      .catch((error: Error) =>
        process.stderr.write(`bench:http: dropping the database failed: ${error.message}\n`),
      )
      .finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  });
}

/**
 * The PostgreSQL rows' database (created empty here; migrated and filled by the built CLI once it
 * is built) and Redis prefix. A missing service fails the run when a -pg scenario was named, and
 * skips those scenarios (a notice) in the default list: `skipped` gets the notice then.
 */
async function connectPgSetup(
  pgNames: readonly string[],
  skipped: string[],
): Promise<PgSetup | undefined | null> {
  let database: BenchDatabase | undefined;
  try {
    database = await createBenchDatabase(ADMIN_URL, { empty: true });
    const redis = await benchRedis();
    liveRedis = redis;
    const pgbench = findPgbench();
    if (pgbench === undefined) {
      const notice = `pgbench rows left out: pgbench not found. ${PGBENCH_INSTALL_HINT}`;
      process.stderr.write(`bench:http: ${notice}\n`);
      skipped.push(notice);
    }
    return { database, redis, pgbench };
  } catch (error) {
    await database?.drop();
    if (!(error instanceof PostgresUnreachableError) && !(error instanceof RedisUnreachableError))
      throw error;
    if (flags.scenarios !== undefined) {
      process.stderr.write(
        `bench:http: ${pgNames.join(", ")} needs PostgreSQL and Redis: ${error.message}\n`,
      );
      process.exitCode = 1;
      return null;
    }
    const notice = `${pgNames.join(", ")} skipped: ${error.message}`;
    process.stderr.write(`bench:http: ${notice}\n`);
    skipped.push(notice);
    return undefined;
  }
}

async function main(): Promise<void> {
  if (loaderName === "wrk") {
    wrkBin = findWrk();
    if (wrkBin === undefined) {
      process.stderr.write(`bench:http: --loader wrk: wrk not found. ${WRK_INSTALL_HINT}\n`);
      process.exitCode = 1;
      return;
    }
  }
  const tableRun = flags.scaling === undefined && flags.rss !== true;
  let names = SCENARIOS;
  const skipped: string[] = [];
  const pgNames = names.filter((n) => parseScenario(n)!.pg);
  let setup: PgSetup | undefined;
  if (tableRun && pgNames.length > 0) {
    const connected = await connectPgSetup(pgNames, skipped);
    if (connected === null) return;
    setup = connected;
    if (setup === undefined) names = names.filter((n) => !parseScenario(n)!.pg);
  }
  try {
    BUILD = await prepare();
    NODE_ARGS = ["--import", join(BUILD, "probe.js")];
    if (setup !== undefined) {
      await migrateAndImportFixtures(setup.database.url);
      if (setup.pgbench !== undefined)
        await setUpWorkloads(setup.database.url, [singleInsert(pgbenchClients)]);
    }
    if (flags.scaling !== undefined) {
      await runScaling(flags.scaling as "products" | "events");
    } else if (flags.rss === true) {
      await runRss(intFlag(flags["rss-seconds"], 180, "rss-seconds"));
    } else {
      await runTable(names, setup, skipped);
    }
  } finally {
    await Promise.all([...ServerChild.running].map((server) => server.stop()));
    await Promise.all([setup?.database.drop(), setup?.redis.clear()]);
  }
}

await main();
