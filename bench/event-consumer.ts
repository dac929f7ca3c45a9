/**
 * Event consumers on PostgreSQL (issue 31), short (about 20 s):
 * - throughput: events per second handed to a no-op handler by `processBatch`, batch 1 and 100,
 *   from a log of `FILL` events (the checkpoint moving in each batch's transaction);
 * - latency from the producer's answer (`append` resolving: what the server's 200 waits for) to the
 *   handler of a consumer woken by NOTIFY (`runConsumer`), one event every 10 ms, p50 / p99.
 *
 *   NODE_OPTIONS=--conditions=@partner-yield/source npx tsx bench/event-consumer.ts
 * Figures in docs/performance.md.
 * @module
 */
import { runConsumer } from "../packages/core/src/index.js";
import { newEvent } from "../packages/core/src/testing/index.js";
import {
  createPool,
  PostgresEventConsumers,
  PostgresEventStore,
} from "../packages/store-postgres/src/index.js";
import { createBenchDatabase } from "./pg-database.js";

const FILL = Number(process.env["FILL"] ?? 20_000);
const LATENCY_EVENTS = Number(process.env["LATENCY_EVENTS"] ?? 500);

const db = await createBenchDatabase();
const pool = createPool({ connectionString: db.url, max: 8 });
try {
  const store = new PostgresEventStore(pool);
  const started = performance.now();
  for (let i = 0; i < FILL; i += 500)
    await Promise.all(Array.from({ length: Math.min(500, FILL - i) }, () => store.append(newEvent())));
  console.log(`filled ${FILL} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const consumers = new PostgresEventConsumers(pool, { connection: false });
  const noop = () => Promise.resolve();
  for (const [limit, budgetMs] of [
    [1, 4000],
    [100, 8000],
  ] as const) {
    const name = `throughput-${limit}`;
    const t0 = performance.now();
    let handled = 0;
    while (performance.now() - t0 < budgetMs) {
      const read = await consumers.processBatch(name, noop, { limit });
      if (read === 0) break;
      handled += read;
    }
    const seconds = (performance.now() - t0) / 1000;
    console.log(
      `throughput batch ${limit}: ${Math.round(handled / seconds)} events/s (${handled} in ${seconds.toFixed(1)} s)`,
    );
  }

  // Latency: the consumer starts at the log's end and is woken by each commit.
  const live = new PostgresEventConsumers(pool);
  const end = await pool.query<{ id: string }>("select max(id)::text as id from events");
  await live.reset("latency", Number(end.rows[0]!.id));
  const answered = new Map<number, number>();
  const latencies: number[] = [];
  const stop = new AbortController();
  const running = runConsumer(
    live,
    "latency",
    async (events) => {
      const now = performance.now();
      for (const e of events) {
        const at = answered.get(e.id);
        if (at !== undefined) latencies.push(now - at);
      }
      if (latencies.length >= LATENCY_EVENTS) stop.abort();
    },
    { signal: stop.signal, pollIntervalMs: 1000 },
  );
  // Let the listener subscribe before the first event.
  for (let i = 0; i < 100 && !live.listening; i++) await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const result = await store.append(newEvent());
    if (result.status === "created") answered.set(result.event.id, performance.now());
    await new Promise((r) => setTimeout(r, 10));
  }
  const deadline = Date.now() + 10_000;
  while (!stop.signal.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  stop.abort();
  await running;
  await live.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  console.log(
    `latency answer -> handler over ${latencies.length} events: p50 ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms, max ${latencies.at(-1)!.toFixed(2)} ms`,
  );
} finally {
  await pool.end();
  await db.drop();
}
