/**
 * The collector's work against the size of the in-memory event store (not a test): fills a
 * `MemoryEventStore` with `--held` events as the API appends them (each its own raw body, its
 * strings parsed from it, `dataFromRawBody`), then times `--appends` more appends of ~1 KiB events,
 * each with ~40 short-lived objects of garbage as a request makes, after 20,000 of warm-up.
 * Prints process CPU per append and the collections during the timed appends (count and pause
 * milliseconds, from `PerformanceObserver` "gc" entries), and the resident set at the end.
 *
 *   npx -y pnpm@10 bench:event-store-gc [--held N] [--appends N] [--root DIR]
 *
 * `--root DIR` takes the store from another checkout's build (DIR/packages/core/dist), e.g. the
 * code before a change; without it, this checkout's source.
 */
import { join, resolve } from "node:path";
import { type PerformanceEntry, PerformanceObserver } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import type * as Core from "../packages/core/src/index.js";
import { intFlagOf, parseFlags } from "./cli-flags.js";
import { apiEvent } from "./http/servers/api-event.js";

const SCRIPT = "bench:event-store-gc";
const HELP = `${SCRIPT} [flags]

Process CPU per append to an in-memory event store already holding --held events, and the
garbage collections during the timed appends.

  --held n      events in the store before the timed appends (default 1000000)
  --appends n   timed appends, after 20,000 of warm-up (default 100000)
  --root dir    take the store from dir/packages/core/dist (a built checkout), not this source
  -h, --help    this text
`;
const flags = parseFlags(SCRIPT, HELP, {
  held: { type: "string" },
  appends: { type: "string" },
  root: { type: "string" },
});
const intFlag = intFlagOf(SCRIPT);
const held = intFlag("held", flags.held, 1_000_000, 0, 50_000_000);
const appends = intFlag("appends", flags.appends, 100_000, 1, 10_000_000);
const core: typeof Core =
  flags.root === undefined
    ? await import("../packages/core/src/index.js")
    : await import(pathToFileURL(join(resolve(flags.root), "packages/core/dist/index.js")).href);

const store = new core.MemoryEventStore({
  maxEvents: Number.MAX_SAFE_INTEGER,
  maxEventBytes: Number.MAX_SAFE_INTEGER,
});
let serial = 0;

function event(padding: number): Core.NewEvent {
  const i = serial++;
  return apiEvent(i, `evt-${i}-${(i * 2_654_435_761).toString(36)}`, padding);
}

let garbage = 0;
async function append(count: number, padding: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const junk: object[] = [];
    for (let j = 0; j < 40; j++) junk.push({ a: j, b: `s${j}`, c: [j] });
    garbage += junk.length;
    const result = await store.append(event(padding));
    if (result.status !== "created") throw new Error(`append: ${result.status}`);
  }
}

const started = performance.now();
for (let done = 0; done < held; done += 100_000) {
  await append(Math.min(100_000, held - done), 40);
  if (held > 100_000)
    process.stderr.write(`\r${SCRIPT}: filled ${Math.min(held, done + 100_000)} of ${held}`);
}
if (held > 100_000) process.stderr.write(` in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
await append(20_000, 900);

const pauses = { minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 }, other: { count: 0, ms: 0 } };
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    // node:perf_hooks constants: NODE_PERFORMANCE_GC_MINOR 1, _MAJOR 4
    const bucket = kind === 1 ? pauses.minor : kind === 4 ? pauses.major : pauses.other;
    bucket.count++;
    bucket.ms += entry.duration;
  }
});
observer.observe({ entryTypes: ["gc"] });
const cpu = process.cpuUsage();
const wall = performance.now();
await append(appends, 900);
const used = process.cpuUsage(cpu);
const elapsed = performance.now() - wall;
await new Promise((done) => setTimeout(done, 100)); // the observer's last entries
observer.disconnect();
const round = (n: number) => Math.round(n * 10) / 10;
console.log(
  JSON.stringify({
    store: flags.root === undefined ? "this checkout" : resolve(flags.root),
    held,
    appends,
    cpu_us_per_append: round((used.user + used.system) / appends),
    wall_us_per_append: round((elapsed * 1000) / appends),
    scavenges: { count: pauses.minor.count, ms: round(pauses.minor.ms) },
    mark_compacts: { count: pauses.major.count, ms: round(pauses.major.ms) },
    other_collections: { count: pauses.other.count, ms: round(pauses.other.ms) },
    rss_mib: Math.round(process.memoryUsage().rss / 2 ** 20),
    garbage_objects: garbage,
  }),
);
