/**
 * Consumers under load and failure (issue 31): 8 producers on two store instances (two pools, as two
 * servers), each appending its partner's events one after the other (each after the previous one's
 * answer, as a partner retrying on 200); 3 competing consumers of the name "alpha" and 1 of "beta",
 * each on its own pool, whose handlers write a row per event in the checkpoint's transaction and
 * now and then kill their own connection mid-batch (pg_terminate_backend after the rows are
 * written, before the commit); a consumer is also stopped and replaced by a new one at random.
 * After each cycle: every event created is handled exactly once per name (no row twice, none
 * missing), and in per-partner order.
 *
 * PARTNER_YIELD_CONSUMER_CYCLES sets the cycles (default 10, what CI runs).
 */
import assert from "node:assert/strict";
import { runConsumer, type StoredEvent } from "@partner-yield/core";
import { newEvent, uniqueTag } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import type pg from "pg";
import { createPool, PostgresEventConsumers, PostgresEventStore } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("chaos") : undefined;

const CYCLES = Number(process.env["PARTNER_YIELD_CONSUMER_CYCLES"] ?? 10);
const PRODUCERS = 8;
const EVENTS_PER_PRODUCER = 12;
/** Chance that a batch's handler kills its connection after writing its rows. */
const KILL_RATE = 0.15;

interface Consumer {
  readonly name: string;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly pool: pg.Pool;
}

function startConsumer(name: string): Consumer {
  const pool = createPool({ connectionString: db!.url, max: 3, statementTimeoutMs: 10_000 });
  // A terminated connection emits an error on the idle client: the pool replaces it.
  pool.on("error", () => undefined);
  const stop = new AbortController();
  const consumers = new PostgresEventConsumers(pool);
  const handler = async (events: readonly StoredEvent[], client: pg.PoolClient) => {
    await client.query(
      `insert into handled (consumer, event_id, partner, seq)
       select $1, * from unnest($2::bigint[], $3::text[], $4::int[])`,
      [
        name,
        events.map((e) => e.id),
        events.map((e) => e.partnerId),
        events.map((e) => Number(e.data["seq"])),
      ],
    );
    // Killed mid-batch: the rows are written, the checkpoint not yet moved, nothing committed.
    if (Math.random() < KILL_RATE) await client.query("select pg_terminate_backend(pg_backend_pid())");
  };
  const done = (async () => {
    while (!stop.signal.aborted) {
      try {
        await runConsumer(consumers, name, handler, {
          limit: 1 + Math.floor(Math.random() * 20),
          signal: stop.signal,
          pollIntervalMs: 200,
        });
      } catch {
        // The connection it killed (or the database said so): go on, as a restarted process would.
      }
    }
    await consumers.close();
    await pool.end().catch(() => undefined);
  })();
  return { name, stop, done, pool };
}

async function produce(store: PostgresEventStore, partner: string, cycle: number): Promise<StoredEvent[]> {
  const created: StoredEvent[] = [];
  for (let seq = 0; seq < EVENTS_PER_PRODUCER; seq++) {
    const result = await store.append(
      newEvent({
        partnerId: partner,
        idempotencyKey: `c${cycle}-s${seq}`,
        data: { seq: cycle * 1000 + seq },
      }),
    );
    assert.equal(result.status, "created");
    created.push((result as { event: StoredEvent }).event);
  }
  return created;
}

describe("event consumers under load, with consumers killed mid-batch", () => {
  test(`${CYCLES} cycles: 8 producers on two instances, 3 competing consumers of one name and 1 of another`, async () => {
    await db!.pool.query(
      "create table handled (n bigserial primary key, consumer text not null, event_id bigint not null, partner text not null, seq int not null)",
    );
    const instances = [0, 1].map(() => {
      const pool = createPool({ connectionString: db!.url, max: 4 });
      return { pool, store: new PostgresEventStore(pool) };
    });
    const partners = Array.from({ length: PRODUCERS }, (_, i) => `p${i}-${uniqueTag()}`);
    let consumers: Consumer[] = [
      startConsumer("alpha"),
      startConsumer("alpha"),
      startConsumer("alpha"),
      startConsumer("beta"),
    ];
    const created: number[] = [];
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const produced = await Promise.all(
          partners.map((partner, i) => produce(instances[i % 2]!.store, partner, cycle)),
        );
        created.push(...produced.flat().map((e) => e.id));
        // One consumer stopped and replaced, at random.
        const victim = Math.floor(Math.random() * consumers.length);
        const old = consumers[victim]!;
        old.stop.abort();
        await old.done;
        consumers = consumers.map((c, i) => (i === victim ? startConsumer(c.name) : c));
        // Both names catch up (a bound for a stuck consumer, not a timing assertion).
        const deadline = Date.now() + 30_000;
        for (;;) {
          const counts = await db!.pool.query<{ consumer: string; n: number }>(
            "select consumer, count(distinct event_id)::int as n from handled group by consumer",
          );
          const of = (name: string) => counts.rows.find((r) => r.consumer === name)?.n ?? 0;
          if (of("alpha") >= created.length && of("beta") >= created.length) break;
          assert.ok(
            Date.now() < deadline,
            `cycle ${cycle}: alpha handled ${of("alpha")}, beta ${of("beta")} of ${created.length}`,
          );
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    } finally {
      for (const c of consumers) c.stop.abort();
      await Promise.all(consumers.map((c) => c.done));
      await Promise.all(instances.map((i) => i.pool.end()));
    }
    const expected = [...created].sort((a, b) => a - b);
    for (const name of ["alpha", "beta"]) {
      const rows = await db!.pool.query<{ event_id: string; partner: string; seq: number }>(
        "select event_id::text, partner, seq from handled where consumer = $1 order by n",
        [name],
      );
      // Exactly once: every event created, none twice, none missing.
      assert.deepEqual(
        rows.rows.map((r) => Number(r.event_id)).sort((a, b) => a - b),
        expected,
        `${name}: every event handled exactly once`,
      );
      // In per-partner order: a partner's events in the order they were acknowledged.
      const last = new Map<string, number>();
      for (const row of rows.rows) {
        assert.ok(
          (last.get(row.partner) ?? -1) < row.seq,
          `${name}: ${row.partner} seq ${row.seq} out of order`,
        );
        last.set(row.partner, row.seq);
      }
    }
  });
});
