/**
 * `npx tsx bench/metrics-cost.ts`: what `serve --metrics-port` adds to a request, in process: the
 * listener's `requestDone` (one counter, one histogram, the 401/429/event counters when they
 * apply) and a store call through `instrument` (the proxy, two clock reads, one histogram), each
 * timed over a million calls after a warm-up. A few seconds of one core; figures in
 * docs/performance.md ("Metrics: what `--metrics-port` adds to a request").
 */
import { createServerMetrics } from "../packages/server/src/metrics.js";

const N = 1_000_000;
const metrics = createServerMetrics({ processMetrics: false });
const outcomes = [
  { route: "GET /products/{slug}", headers: {} },
  { route: "GET /products", headers: {} },
  { route: "POST /webhooks/inbound", headers: { "idempotent-replayed": "true" } },
  { route: "GET /products", errorCode: "invalid_api_key", headers: {} },
];
const statuses = [200, 200, 200, 401];

function timeNs(label: string, run: (i: number) => unknown): void {
  for (let i = 0; i < N / 10; i++) run(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) run(i);
  const ns = Number(process.hrtime.bigint() - start) / N;
  process.stdout.write(`${label.padEnd(48)} ${ns.toFixed(0)} ns\n`);
}

timeNs("requestDone (4 routes, 1 in 4 a 401)", (i) =>
  metrics.requestDone({
    outcome: outcomes[i & 3],
    path: "/api/partner/products",
    status: statuses[i & 3]!,
    durationMs: 0.4,
  }),
);
class Keys {
  readonly #rows = new Map([["k", { id: "1" }]]);
  find(key: string) {
    return this.#rows.get(key);
  }
  async findAsync(key: string) {
    return this.#rows.get(key);
  }
}
const bare = new Keys();
const keys = metrics.instrument("keys", new Keys());
timeNs("store call, sync, bare", () => bare.find("k"));
timeNs("store call, sync, instrumented", () => keys.find("k"));
let sink: unknown;
const asyncRun = async (store: Keys, label: string) => {
  for (let i = 0; i < N / 10; i++) sink = await store.findAsync("k");
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) sink = await store.findAsync("k");
  const ns = Number(process.hrtime.bigint() - start) / N;
  process.stdout.write(`${label.padEnd(48)} ${ns.toFixed(0)} ns\n`);
};
await asyncRun(bare, "store call, async, bare");
await asyncRun(keys, "store call, async, instrumented");
void sink;
