/**
 * `pnpm bench:http`: our server against a bare node:http server answering the same bytes (and,
 * for GET product, Fastify and Hono counterparts), each in its own child process, loaded with
 * autocannon over loopback in alternating rounds. Prints req/s, p50/p99 latency, the server's CPU
 * µs per request (process.cpuUsage of the child) and RSS, with ratios to the bare server.
 * `--help` lists the flags.
 * @module
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import ts from "typescript";
import { signBody } from "../../packages/core/src/index.js";
import { DEMO_CREDENTIALS as DEMO } from "../../packages/node-adapter/src/demo.js";
import { intFlagOf, parseFlags, usageError } from "../cli-flags.js";
import { productFixtures } from "./scaling-fixtures.js";
import type { CapturedResponse, ServerSpec } from "./servers/common.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));

const HELP = `pnpm bench:http [flags]

  --scenarios a,b     product, product-nolog, healthz, yield-calc, position, post (default: all);
                      any scenario + "-nolog" runs our server with --log none
  --rounds n          alternating rounds per scenario (default 5)
  --duration s        seconds per measured run (default 6)
  --warmup s          seconds of warm-up per server before the rounds (default 2)
  --connections n     autocannon connections (default 50)
  --pipelining n      requests in flight per connection (default 1)
  --quick             2 rounds x 3 s, 1 s warm-up
  --profile dir       our server runs with --cpu-prof, profiles written to dir (see profile-summary.ts)
  --rss               instead of the table: RSS of our server over a sustained GET product load
  --rss-seconds n     length of that load after warm-up (default 180), sampled every 10 s
  --scaling kind      instead of the table: products (GET product with 1..10,000 products in the
                      fixtures) or events (signed POST with 1k..1M events already stored)
  --sizes a,b,...     sizes of the scaling run (default products 1,100,1000,10000; events
                      1000,10000,100000,1000000)
  --baseline dir      also run the server of another checkout (built), e.g. the code before a change,
                      as "partner-yield (baseline)" in the same alternating rounds
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

const ALL = ["product", "product-nolog", "healthz", "yield-calc", "position", "post"];
const SCENARIOS = flags.scenarios === undefined ? ALL : flags.scenarios.split(",");
for (const name of SCENARIOS) {
  if (REQUESTS[name.replace(/-nolog$/, "")] === undefined) {
    usageError("bench:http", `unknown scenario ${JSON.stringify(name)} in --scenarios`);
  }
}
if (flags.scaling !== undefined && flags.scaling !== "products" && flags.scaling !== "events") {
  usageError("bench:http", `--scaling must be products or events (got ${JSON.stringify(flags.scaling)})`);
}

// ---- servers -------------------------------------------------------------------------------

interface Stats {
  readonly cpuMicros: number;
  readonly rss: number;
}

class ServerChild {
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
  }

  stats(): Promise<Stats> {
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#child.send({ type: "stats" });
    });
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once("exit", resolve));
    this.#child.send({ type: "exit" });
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
const BUILD = prepare();
const NODE_ARGS = ["--import", join(BUILD, "probe.js")];

function profileArgs(name: string): string[] {
  return flags.profile === undefined
    ? []
    : ["--cpu-prof", "--cpu-prof-dir", flags.profile, "--cpu-prof-name", `${name}.cpuprofile`];
}

function startOurs(name: string, extra: string[] = [], root = ROOT): ServerChild {
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
    ...(root === ROOT ? ["--max-events", "1000000000", "--max-event-bytes", String(8 * 1024 ** 3)] : []),
    ...extra,
  ];
  return new ServerChild(name, port, args);
}

function startComparison(name: string, file: string, spec: Omit<ServerSpec, "port">): ServerChild {
  const port = nextPort++;
  return new ServerChild(name, port, [...NODE_ARGS, join(BUILD, "servers", file.replace(/\.ts$/, ".js"))], {
    BENCH_SPEC: JSON.stringify({ ...spec, port }),
  });
}

async function waitReady(server: ServerChild): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
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
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuPerRequest: number;
  readonly rss: number;
  readonly bad: number;
}

async function load(server: ServerChild, shape: RequestShape, seconds: number): Promise<Sample> {
  const before = await server.stats();
  const result = await autocannon({
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
  });
  const after = await server.stats();
  const total = result.requests.total;
  return {
    reqPerSec: total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerRequest: (after.cpuMicros - before.cpuMicros) / Math.max(1, total),
    rss: after.rss,
    bad: result.non2xx + result.errors + result.timeouts,
  };
}

// ---- the comparison table -----------------------------------------------------------------

interface Contender {
  readonly label: string;
  readonly server: ServerChild;
}

interface Scenario {
  readonly name: string;
  readonly shape: RequestShape;
  /** Starts the servers: bare first (the baseline). */
  readonly start: () => Promise<Contender[]>;
}

async function oursAndCaptured(name: string, shape: RequestShape, extra: string[] = []) {
  const ours = startOurs(name, extra);
  await waitReady(ours);
  const response = await capture(ours, shape);
  return { ours, response };
}

function scenario(name: string): Scenario {
  const nolog = name.endsWith("-nolog");
  const requestName = nolog ? name.slice(0, -"-nolog".length) : name;
  const shape = REQUESTS[requestName];
  if (shape === undefined) throw new Error(`unknown scenario ${name}`);
  return {
    name,
    shape,
    start: async () => {
      const logFlags = nolog ? ["--log", "none"] : [];
      const { ours, response } = await oursAndCaptured(`ours-${name}`, shape, logFlags);
      const spec = { response, readsBody: shape.body !== undefined, apiKey: DEMO.sandboxApiKey };
      const contenders: Contender[] = [
        { label: "bare node:http", server: startComparison("bare", "bare.ts", spec) },
        { label: `partner-yield${nolog ? " --log none" : ""}`, server: ours },
      ];
      if (flags.baseline !== undefined) {
        const baseline = startOurs(`baseline-${name}`, logFlags, flags.baseline);
        contenders.push({ label: "partner-yield (baseline)", server: baseline });
      }
      if (name === "product") {
        contenders.push({ label: "fastify", server: startComparison("fastify", "fastify.ts", spec) });
        contenders.push({ label: "hono", server: startComparison("hono", "hono.ts", spec) });
      }
      for (const c of contenders) await waitReady(c.server);
      return contenders;
    },
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function runTable(names: string[]): Promise<void> {
  header();
  console.log(
    "| scenario | server | req/s | x bare | p50 ms | p99 ms | x bare p99 | CPU µs/req | x bare CPU | RSS MiB | non-2xx/errors |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const name of names) {
    const sc = scenario(name);
    const contenders = await sc.start();
    try {
      for (const c of contenders) await load(c.server, sc.shape, settings.warmup);
      const samples = new Map<Contender, Sample[]>(contenders.map((c) => [c, []]));
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? contenders : [...contenders].reverse();
        for (const c of order) samples.get(c)!.push(await load(c.server, sc.shape, settings.duration));
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
      for (const c of contenders) {
        const m = summary(c);
        console.log(
          `| ${name} | ${c.label} | ${Math.round(m.rps)} | ${(m.rps / base.rps).toFixed(2)} | ${m.p50.toFixed(1)} | ${m.p99.toFixed(1)} | ${(m.p99 / Math.max(base.p99, 1)).toFixed(2)} | ${m.cpu.toFixed(1)} | ${(m.cpu / base.cpu).toFixed(2)} | ${(m.rss / 2 ** 20).toFixed(0)} | ${m.bad} |`,
        );
      }
    } finally {
      await Promise.all(contenders.map((c) => c.server.stop()));
    }
  }
}

function header(): void {
  const cpu = cpus();
  console.log(
    `machine: ${cpu[0]?.model ?? "?"} x ${cpu.length} cores; node ${process.version}; ` +
      `autocannon ${settings.connections} connections, pipelining ${settings.pipelining}; ` +
      `${settings.rounds} alternating rounds x ${settings.duration} s after ${settings.warmup} s warm-up; ` +
      `medians of the rounds; our server: \`partner-yield serve\` (JSON request log to /dev/null unless --log none, ` +
      `limiter on with --rate-limit-quota 1000000000), in-memory stores with their bounds lifted`,
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
 * slices, its RSS read after each. The target: flat within 10 % after warm-up.
 */
async function runRss(seconds: number): Promise<void> {
  header();
  const shape = REQUESTS["product"]!;
  const ours = startOurs("ours-rss");
  await waitReady(ours);
  try {
    await load(ours, shape, Math.max(settings.warmup, 10));
    const warm = await ours.stats();
    console.log(`RSS after warm-up: ${(warm.rss / 2 ** 20).toFixed(1)} MiB\n`);
    console.log("| seconds | req/s | CPU µs/req | RSS MiB |");
    console.log("|---:|---:|---:|---:|");
    const samples: number[] = [];
    for (let t = 10; t <= seconds; t += 10) {
      const s = await load(ours, shape, 10);
      samples.push(s.rss);
      console.log(
        `| ${t} | ${Math.round(s.reqPerSec)} | ${s.cpuPerRequest.toFixed(1)} | ${(s.rss / 2 ** 20).toFixed(1)} |`,
      );
    }
    const min = Math.min(...samples);
    const max = Math.max(...samples);
    console.log(
      `\nRSS min ${(min / 2 ** 20).toFixed(1)} MiB, max ${(max / 2 ** 20).toFixed(1)} MiB: spread ${((100 * (max - min)) / min).toFixed(1)} % (target <= 10 %)`,
    );
  } finally {
    await ours.stop();
  }
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
        `| ${r.size.toLocaleString("en-US")} | ${Math.round(median(s.map((x) => x.reqPerSec)))} | ${median(s.map((x) => x.p99)).toFixed(1)} | ${cpu.toFixed(1)} | ${(cpu / first).toFixed(2)} | ${(s.at(-1)!.rss / 2 ** 20).toFixed(0)} | ${s.reduce((n, x) => n + x.bad, 0)} |`,
      );
    }
  } finally {
    await Promise.all(runs.map((r) => r.server.stop()));
  }
}

async function main(): Promise<void> {
  if (flags.scaling !== undefined) {
    await runScaling(flags.scaling as "products" | "events");
    return;
  }
  if (flags.rss === true) {
    await runRss(intFlag(flags["rss-seconds"], 180, "rss-seconds"));
    return;
  }
  await runTable(SCENARIOS);
}

await main();
