/**
 * A consumer across a server's SIGKILL (issue 31): 4 producers post events to a `serve
 * --database-url` process, which is killed with SIGKILL mid-stream and started again; each producer
 * retries a request that got no answer with the same idempotency key. A consumer processing the
 * log all along (its rows written in the checkpoint's transaction) handles every acknowledged event
 * exactly once, and nothing else: one event per key, every 200's event_id among them.
 */
import assert from "node:assert/strict";
import { runConsumer } from "@partner-yield/core";
import { DEFAULT_FIXTURES_DIR, loadFixtureDir } from "@partner-yield/node-adapter";
import { eventBody, eventHeaders, gate, INBOUND } from "@partner-yield/node-adapter/testing";
import { createPool, dataSetOf, importData, PostgresEventConsumers } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { type ServerProcess, startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("evkill") : undefined;

const PRODUCERS = 4;
const EVENTS_PER_PRODUCER = 25;

describe("event consumers across a server's SIGKILL", () => {
  test("every acknowledged event is handled exactly once; retries keep their event_id", async () => {
    await importData(db!.pool, dataSetOf(loadFixtureDir(DEFAULT_FIXTURES_DIR)));
    await db!.pool.query("create table handled (event_id bigint not null, key text not null)");
    const consumerPool = createPool({ connectionString: db!.url, max: 2 });
    consumerPool.on("error", () => undefined);
    const consumers = new PostgresEventConsumers(consumerPool);
    const stop = new AbortController();
    const consuming = runConsumer(
      consumers,
      "ledger",
      async (events, client) => {
        await client.query("insert into handled select * from unnest($1::bigint[], $2::text[])", [
          events.map((e) => e.id),
          events.map((e) => e.idempotencyKey),
        ]);
      },
      { signal: stop.signal, pollIntervalMs: 200 },
    );

    let server: ServerProcess = await startServerProcess(["--database-url", db!.url]);
    let restarted: Promise<ServerProcess> | undefined;
    const acknowledged = new Map<string, number>();
    let sent = 0;
    const post = async (key: string, body: string): Promise<number | undefined> => {
      try {
        const response = await fetch(`${server.url}${INBOUND}`, {
          method: "POST",
          headers: eventHeaders(body, key),
          body,
          signal: AbortSignal.timeout(5000),
        });
        if (response.status !== 200) return undefined;
        return ((await response.json()) as { event_id: number }).event_id;
      } catch {
        return undefined; // no answer: the server is gone
      }
    };
    const producer = async (p: number) => {
      for (let i = 0; i < EVENTS_PER_PRODUCER; i++) {
        const key = `kill-${p}-${i}`;
        const body = eventBody(`${p}-${i}`);
        for (;;) {
          if (++sent === Math.floor((PRODUCERS * EVENTS_PER_PRODUCER) / 2) && restarted === undefined) {
            // Mid-stream: SIGKILL, then a new process on the same database.
            const killed = server;
            restarted = killed.stop("SIGKILL").then(() => startServerProcess(["--database-url", db!.url]));
            server = await restarted;
          }
          const id = await post(key, body);
          if (id !== undefined) {
            const earlier = acknowledged.get(key);
            assert.ok(earlier === undefined || earlier === id, `${key}: a retry got another event_id`);
            acknowledged.set(key, id);
            break;
          }
          if (restarted !== undefined) server = await restarted;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: PRODUCERS }, (_, p) => producer(p)));
      assert.ok(restarted !== undefined, "the server was killed mid-stream");
      // The consumer catches up (a bound for a stuck consumer, not a timing assertion).
      const deadline = Date.now() + 30_000;
      while (
        (await db!.pool.query("select count(distinct event_id)::int as n from handled")).rows[0].n <
        acknowledged.size
      ) {
        assert.ok(Date.now() < deadline, "the consumer did not catch up within 30 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      stop.abort();
      await consuming.catch(() => undefined);
      await consumers.close();
      await consumerPool.end();
      await server.stop("SIGTERM");
    }
    const handled = await db!.pool.query<{ event_id: string; key: string }>(
      "select event_id::text, key from handled",
    );
    const stored = await db!.pool.query<{ id: string }>("select id::text from events");
    assert.equal(stored.rows.length, PRODUCERS * EVENTS_PER_PRODUCER, "one event per key");
    assert.deepEqual(
      handled.rows.map((r) => Number(r.event_id)).sort((a, b) => a - b),
      stored.rows.map((r) => Number(r.id)).sort((a, b) => a - b),
      "every stored event handled exactly once",
    );
    for (const row of handled.rows) assert.equal(acknowledged.get(row.key), Number(row.event_id), row.key);
  });
});
