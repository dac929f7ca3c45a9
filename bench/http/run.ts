/**
 * `pnpm bench:http`: our server against a bare node:http server answering the same bytes (and,
 * for GET product, Fastify and Hono counterparts), each in its own child process, loaded with
 * autocannon over loopback in alternating rounds. Prints req/s, p50/p99 latency, the server's CPU
 * µs per request (process.cpuUsage of the child) and RSS, with ratios to the bare server; for
 * `post-pg`, our server on a PostgreSQL database of its own, and PostgreSQL's own CPU per request
 * read from /proc. `--help` lists the flags.
 * @module
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import ts from "typescript";
import { signBody } from "../../packages/core/src/index.js";
import { DEMO_CREDENTIALS as DEMO } from "../../packages/node-adapter/src/demo.js";
import { intFlagOf, parseFlags, usageError } from "../cli-flags.js";
import {
  ADMIN_URL,
  type BenchDatabase,
  createBenchDatabase,
  dropLiveDatabases,
  PostgresUnreachableError,
} from "../pg-database.js";
import { type PgCpuSample, pgCpuReader, pgCpuSince } from "./pg-cpu.js";
import { productFixtures } from "./scaling-fixtures.js";
import type { CapturedResponse, ServerSpec } from "./servers/common.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));

const HELP = `pnpm bench:http [flags]

  --scenarios a,b     product, product-nolog, healthz, yield-calc, position, post, post-pg
                      (default: all); any scenario + "-nolog" runs our server with --log none.
                      post-pg is post with our server on PostgreSQL (--database-url to a database
                      of its own, created, migrated and filled with the fixtures at start, dropped
                      at the end, also on failure or Ctrl-C), next to the same bare server (and
                      to ours in memory when post is selected too: one group, the same rounds);
                      a second table gives PostgreSQL's own CPU per request (its processes' utime
                      + stime from /proc, which the CPU column cannot see). It needs PostgreSQL at
                      PARTNER_YIELD_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/
                      postgres, a user that may create databases): named in --scenarios, the run
                      fails at start without it; in the default list it is skipped with a notice
  --rounds n          alternating rounds per scenario (default 5)
  --duration s        seconds per measured run (default 6)
  --warmup s          seconds of warm-up per server before the rounds (default 2)
  --connections n     autocannon connections (default 50)
  --pipelining n      requests in flight per connection (default 1)
  --quick             2 rounds x 3 s, 1 s warm-up
  --profile dir       our server runs with --cpu-prof, profiles written to dir (see profile-summary.ts)
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
  "port-base": { type: "string" },
  baseline: { type: "string" },
  rss: { type: "boolean" },
  scaling: { type: "string" },
  sizes: { type: "string" },
  "rss-seconds": { type: "string" },
  calibrate: { type: "string" },
  "batched-bare": { type: "boolean" },
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

interface RequestShape {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  /** A header that must change per request (a new Idempotency-Key each time). */
  readonly fresh?: () => Record<string, string>;
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
    fresh: () => ({ "idempotency-key": nextIdempotencyKey() }),
  },
};

const ALL = ["product", "product-nolog", "healthz", "yield-calc", "position", "post", "post-pg"];
/** Scenarios that run our server on PostgreSQL: the request's name + "-pg". */
const PG_REQUESTS = new Set(["post"]);
const SCENARIOS = flags.scenarios === undefined ? ALL : flags.scenarios.split(",");

interface ScenarioName {
  /** The key of REQUESTS. */
  readonly request: string;
  /** Our server on PostgreSQL. */
  readonly pg: boolean;
  /** Our server with --log none. */
  readonly nolog: boolean;
}

function parseScenario(name: string): ScenarioName | undefined {
  const m = /^(.+?)(-pg)?(-nolog)?$/.exec(name);
  if (m === null || REQUESTS[m[1]!] === undefined) return undefined;
  const pg = m[2] !== undefined;
  if (pg && !PG_REQUESTS.has(m[1]!)) return undefined;
  return { request: m[1]!, pg, nolog: m[3] !== undefined };
}
for (const name of SCENARIOS) {
  if (parseScenario(name) === undefined) {
    usageError("bench:http", `unknown scenario ${JSON.stringify(name)} in --scenarios`);
  }
}
if (flags.scaling !== undefined && flags.scaling !== "products" && flags.scaling !== "events") {
  usageError("bench:http", `--scaling must be products or events (got ${JSON.stringify(flags.scaling)})`);
}
if (calibration.length > 0 && (flags.scaling !== undefined || flags.rss === true)) {
  usageError("bench:http", "--calibrate adds rows to the table: it does not go with --rss or --scaling");
}
if (flags["batched-bare"] === true && (flags.scaling !== undefined || flags.rss === true)) {
  usageError("bench:http", "--batched-bare adds a row to the table: it does not go with --rss or --scaling");
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
function prepare(): string {
  execFileSync(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-b", "packages/node-adapter/tsconfig.build.json"],
    {
      cwd: ROOT,
      stdio: "inherit",
    },
  );
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
    ...NODE_ARGS,
    join(root, "packages/node-adapter/bin/partner-yield.js"),
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
  return new ServerChild(name, port, args, env);
}

/** Whether the built CLI of a checkout takes `--max-events` (added with the in-memory bounds). */
function hasEventBounds(root: string): boolean {
  if (root === ROOT) return true;
  const options = join(root, "packages/node-adapter/dist/cli-options.js");
  return existsSync(options) && readFileSync(options, "utf8").includes('"max-events"');
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
    headers: { ...shape.headers, ...shape.fresh?.() },
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

interface Sample {
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

async function load(server: ServerChild, shape: RequestShape, seconds: number): Promise<Sample> {
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
          ...(shape.fresh === undefined
            ? {}
            : {
                setupRequest: (req: autocannon.Request) => ({
                  ...req,
                  headers: { ...shape.headers, ...shape.fresh!() },
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
    total,
    reqPerSec: total / seconds,
    p50: p50!,
    p99: p99!,
    cpuPerRequest: (after.cpuMicros - before.cpuMicros) / Math.max(1, total),
    rss: after.rss,
    rssLow: after.rssLow ?? after.rss,
    rssHigh: Math.max(after.rssHigh, after.rss),
    bad: result.non2xx + result.errors + result.timeouts,
  };
}

// ---- the comparison table -----------------------------------------------------------------

interface Contender {
  readonly label: string;
  readonly server: ServerChild;
  /** The scenario its rows name. */
  readonly scenario: string;
  /** Our server on PostgreSQL: PostgreSQL's own CPU is read around its runs. */
  readonly pg?: boolean;
  /** For a PostgreSQL contender: the same server in memory, when in the same group. */
  readonly inMemory?: Contender | undefined;
}

/**
 * The scenarios in groups of one bare server and the same alternating rounds: `X` and `X-pg` (the
 * same `-nolog`) form one group.
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
  // In memory first: its answer is the one the bare server gives.
  for (const group of out) group.sort((a, b) => Number(parseScenario(a)!.pg) - Number(parseScenario(b)!.pg));
  return out;
}

/** Starts a group's servers: bare first (the baseline). */
async function startGroup(
  names: readonly string[],
  database: BenchDatabase | undefined,
): Promise<Contender[]> {
  const parsed = names.map((name) => ({ name, ...parseScenario(name)! }));
  const { request, nolog } = parsed[0]!;
  const shape = REQUESTS[request]!;
  const logFlags = nolog ? ["--log", "none"] : [];
  const ours: Contender[] = [];
  for (const p of parsed) {
    const url = p.pg ? database!.url : undefined;
    const label = `partner-yield${p.pg ? " on PostgreSQL" : ""}${nolog ? " --log none" : ""}`;
    const inMemory = p.pg ? ours.find((c) => !c.pg && !c.label.endsWith("(baseline)")) : undefined;
    ours.push({
      label,
      scenario: p.name,
      pg: p.pg,
      inMemory,
      server: startOurs(`ours-${p.name}`, logFlags, ROOT, url),
    });
    if (flags.baseline !== undefined) {
      const baselineInMemory = p.pg ? ours.find((c) => !c.pg && c.label.endsWith("(baseline)")) : undefined;
      ours.push({
        label: `${label} (baseline)`,
        scenario: p.name,
        pg: p.pg,
        inMemory: baselineInMemory,
        server: startOurs(`baseline-${p.name}`, logFlags, flags.baseline, url),
      });
    }
  }
  let response: CapturedResponse | undefined;
  for (const c of ours) {
    await waitReady(c.server);
    // Each of ours must answer the request (2xx); the bare server gives the first answer.
    const answer = await capture(c.server, shape);
    response ??= answer;
  }
  const spec = { response: response!, readsBody: shape.body !== undefined, apiKey: DEMO.sandboxApiKey };
  const contenders: Contender[] = [
    { label: "bare node:http", scenario: names.join(", "), server: startComparison("bare", "bare.ts", spec) },
    ...ours,
  ];
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
  for (const c of contenders) await waitReady(c.server);
  return contenders;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** PostgreSQL's CPU during one run of a PostgreSQL contender, per request. */
interface PgSample {
  readonly own: number;
  readonly background: number;
  /** Whether any process of the bench database was seen (false: PostgreSQL is not on this machine). */
  readonly seen: boolean;
}

async function runTable(
  names: string[],
  database: BenchDatabase | undefined,
  skipped?: string,
): Promise<void> {
  header(database);
  console.log(
    "| scenario | server | req/s | x bare | p50 ms | p99 ms | x bare p99 | CPU µs/req | x bare CPU | RSS MiB | non-2xx/errors |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  const pgRows: string[] = [];
  let pgUnreadable = false;
  for (const group of groupsOf(names)) {
    const shape = REQUESTS[parseScenario(group[0]!)!.request]!;
    const contenders = await startGroup(group, database);
    const readPg =
      database !== undefined && contenders.some((c) => c.pg) ? pgCpuReader(database.name) : undefined;
    if (database !== undefined && contenders.some((c) => c.pg) && readPg === undefined) pgUnreadable = true;
    try {
      for (const c of contenders) await load(c.server, shape, settings.warmup);
      const samples = new Map<Contender, Sample[]>(contenders.map((c) => [c, []]));
      const pgSamples = new Map<Contender, PgSample[]>(contenders.map((c) => [c, []]));
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? contenders : [...contenders].reverse();
        for (const c of order) {
          const pgBefore: PgCpuSample | undefined = c.pg === true ? readPg?.() : undefined;
          const sample = await load(c.server, shape, settings.duration);
          samples.get(c)!.push(sample);
          if (pgBefore !== undefined) {
            const after = readPg!();
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
      const baseSamples = samples.get(contenders[0]!)!;
      // Each round's ratio to the bare server's run of the same round, then the median: the two
      // runs are minutes closer in time than the rounds' medians are, so the machine's drift
      // (this VM's speed moves by 10-30 % over minutes) cancels out of the ratio.
      const ratios = (c: Contender, pick: (x: Sample) => number) =>
        samples.get(c)!.map((x, i) => pick(x) / Math.max(pick(baseSamples[i]!), 1e-9));
      const ratio = (c: Contender, pick: (x: Sample) => number) => median(ratios(c, pick));
      for (const c of contenders) {
        const m = summary(c);
        const rpsRatios = ratios(c, (x) => x.reqPerSec);
        // The rounds' spread, so a reader sees how far one round's ratio can be from the median.
        const rpsCell =
          c === contenders[0]
            ? "1.00"
            : `${median(rpsRatios).toFixed(2)} (${Math.min(...rpsRatios).toFixed(2)}–${Math.max(...rpsRatios).toFixed(2)})`;
        const p99Ratio = ratio(c, (x) => Math.max(x.p99, 1e-3));
        const cpuRatio = ratio(c, (x) => x.cpuPerRequest);
        console.log(
          `| ${c.scenario} | ${c.label} | ${Math.round(m.rps)} | ${rpsCell} | ${m.p50.toFixed(2)} | ${m.p99.toFixed(2)} | ${p99Ratio.toFixed(2)} | ${m.cpu.toFixed(1)} | ${cpuRatio.toFixed(2)} | ${(m.rss / 2 ** 20).toFixed(0)} | ${m.bad} |`,
        );
        const pg = pgSamples.get(c)!;
        if (pg.length === 0) continue;
        const server = samples.get(c)!;
        const memory = c.inMemory === undefined ? "–" : (m.rps / summary(c.inMemory).rps).toFixed(2);
        const seen = pg.some((x) => x.seen);
        const cell = (xs: number[]) => (seen ? median(xs).toFixed(1) : "not seen");
        const total = median(server.map((x, i) => x.cpuPerRequest + pg[i]!.own + pg[i]!.background));
        pgRows.push(
          `| ${c.scenario} | ${c.label} | ${Math.round(m.rps)} | ${memory} | ${m.cpu.toFixed(1)} | ${cell(pg.map((x) => x.own))} | ${cell(pg.map((x) => x.background))} | ${seen ? total.toFixed(1) : "–"} | ${seen ? (total / base.cpu).toFixed(2) : "–"} |`,
        );
      }
    } finally {
      await Promise.all(contenders.map((c) => c.server.stop()));
    }
  }
  if (pgRows.length > 0 || pgUnreadable) {
    console.log(
      "\nPostgreSQL's own CPU (a separate process on the same cores, which the CPU column above, the server " +
        "process's own time, cannot see): utime + stime of its processes from /proc, read before and after " +
        'each run of our server on PostgreSQL; medians of the rounds, per request. "backends": the processes ' +
        "of the bench's database (its pool's connections, autovacuum); \"background\": postmaster, " +
        "checkpointer, background writer, walwriter... (server-wide: they also count any other database's " +
        'load). "total": server + backends + background, against the bare server\'s CPU.\n',
    );
    if (pgUnreadable) console.log("not measured: /proc cannot be read on this machine\n");
    console.log(
      "| scenario | server | req/s | x in memory req/s | server CPU µs/req | PostgreSQL backends µs/req | PostgreSQL background µs/req | total CPU µs/req | x bare CPU |",
    );
    console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (const row of pgRows) console.log(row);
  }
  if (skipped !== undefined) console.log(`\n${skipped}`);
}

function header(database?: BenchDatabase): void {
  const cpu = cpus();
  console.log(
    `machine: ${cpu[0]?.model ?? "?"} x ${cpu.length} cores; node ${process.version}; ` +
      `autocannon ${settings.connections} connections, pipelining ${settings.pipelining}; ` +
      `${settings.rounds} alternating rounds x ${settings.duration} s after ${settings.warmup} s warm-up; ` +
      `medians of the rounds; each "x bare" is the median of the rounds' ratios to the bare server's run in the same round (req/s: lowest–highest round in brackets); our server: \`partner-yield serve\` (JSON request log to /dev/null unless --log none, ` +
      `limiter on with --rate-limit-quota 1000000000), in-memory stores with their bounds lifted` +
      (database === undefined
        ? ""
        : `; "on PostgreSQL": --database-url to ${database.name} (a database of this run's own, fixtures imported; default pool of 10)`),
  );
}

function withoutNodeOptions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _dropped, ...rest } = env;
  return rest;
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
      const slices: Sample[] = [];
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
function rssSummary(label: string, slices: readonly Sample[]): string {
  const spread = (xs: readonly number[]) => {
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
    `  at the slices' ends: ${spread(ends)} (target <= 10 %)`,
    `  every 100 ms reading: ${spread([...slices.map((s) => s.rssLow), ...slices.map((s) => s.rssHigh)])}`,
    `  the slices' highest readings: ${spread(slices.map((s) => s.rssHigh))}`,
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
    const samples = new Map(runs.map((r) => [r, [] as Sample[]]));
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

// Ctrl-C (or a SIGTERM) stops the servers and drops the bench database before exiting.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    process.stderr.write(
      `bench:http: ${signal}: stopping the servers and dropping the bench database, if any\n`,
    );
    // At most 5 s for their shutdown, then the rest are killed; then the database goes.
    Promise.all([...ServerChild.running].map((server) => server.stop()))
      .then(() => dropLiveDatabases())
      .catch((error: Error) =>
        process.stderr.write(`bench:http: dropping the database failed: ${error.message}\n`),
      )
      .finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  });
}

async function main(): Promise<void> {
  const tableRun = flags.scaling === undefined && flags.rss !== true;
  let names = SCENARIOS;
  let database: BenchDatabase | undefined;
  let skipped: string | undefined;
  const pgNames = names.filter((n) => parseScenario(n)!.pg);
  if (tableRun && pgNames.length > 0) {
    try {
      database = await createBenchDatabase(ADMIN_URL);
    } catch (error) {
      if (!(error instanceof PostgresUnreachableError)) throw error;
      if (flags.scenarios !== undefined) {
        process.stderr.write(`bench:http: ${pgNames.join(", ")} needs PostgreSQL: ${error.message}\n`);
        process.exitCode = 1;
        return;
      }
      skipped = `${pgNames.join(", ")} skipped: ${error.message}`;
      process.stderr.write(`bench:http: ${skipped}\n`);
      names = names.filter((n) => !parseScenario(n)!.pg);
    }
  }
  try {
    BUILD = prepare();
    NODE_ARGS = ["--import", join(BUILD, "probe.js")];
    if (flags.scaling !== undefined) {
      await runScaling(flags.scaling as "products" | "events");
    } else if (flags.rss === true) {
      await runRss(intFlag(flags["rss-seconds"], 180, "rss-seconds"));
    } else {
      await runTable(names, database, skipped);
    }
  } finally {
    await Promise.all([...ServerChild.running].map((server) => server.stop()));
    await database?.drop();
  }
}

await main();
