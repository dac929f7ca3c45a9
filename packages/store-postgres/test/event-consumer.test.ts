/**
 * `PostgresEventConsumers` (README "Processing events"): poll/ack with its compare-and-set, filters,
 * `process` with the handler's writes in the checkpoint's transaction, turns between consumers of
 * one name, the classic outbox gap (an id held by a transaction that commits late is not skipped),
 * the wake-up on commit, and prune (never an unacknowledged event; a key inside the idempotency
 * window still answers with its original event_id).
 */
import assert from "node:assert/strict";
import { iterateEvents, runConsumer, type StoredEvent } from "@partner-yield/core";
import { sleep } from "@partner-yield/core/backends";
import { newEvent, uniqueTag } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import type pg from "pg";
import { PostgresEventConsumers, PostgresEventStore, pruneEvents } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("consumer") : undefined;

async function append(
  store: PostgresEventStore,
  overrides: Parameters<typeof newEvent>[0] = {},
): Promise<StoredEvent> {
  const result = await store.append(newEvent(overrides));
  assert.equal(result.status, "created");
  return (result as { event: StoredEvent }).event;
}

/**
 * Waits until the log's horizon has passed every event committed so far. A transaction running
 * anywhere on the server (another test file's, in another database) holds the horizon back while
 * it runs (store-postgres README, "Processing events"): a poll right after a commit may hand out
 * nothing yet, never skip.
 */
async function settled(): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { rows } = await db!.pool.query<{ passed: boolean }>(
      `select coalesce((select xid from events order by xid desc limit 1), '0'::xid8)
         < pg_snapshot_xmin(pg_current_snapshot()) as passed`,
    );
    if (rows[0]!.passed) return;
    assert.ok(Date.now() < deadline, "the log's horizon did not pass the last event within 15 s");
    await sleep(20);
  }
}

describe("PostgresEventConsumers", () => {
  test("poll hands out events after the checkpoint in order; ack moves it only forward; filters pass over others", async () => {
    const store = new PostgresEventStore(db!.pool);
    const consumers = new PostgresEventConsumers(db!.pool, { connection: false });
    const name = `basic-${uniqueTag()}`;
    const partner = `p-${uniqueTag()}`;
    const first = await consumers.poll({ consumer: name, limit: 10_000 });
    if (first.upTo !== undefined) await consumers.ack(name, first.upTo);
    const a = await append(store, { partnerId: partner, eventType: "partner.user.created" });
    const b = await append(store, { partnerId: partner, eventType: "partner.kyc.updated" });
    const c = await append(store, { partnerId: partner, eventType: "partner.user.created" });
    await settled();
    const batch = await consumers.poll({ consumer: name, limit: 2 });
    assert.deepEqual(
      batch.events.map((e) => e.id),
      [a.id, b.id],
    );
    assert.equal(batch.upTo, b.id);
    assert.equal(await consumers.ack(name, b.id), true);
    assert.equal(await consumers.ack(name, a.id), false, "an ack behind the checkpoint does not move it");
    assert.equal(await consumers.ack(name, b.id), false);
    const rest = await consumers.poll({ consumer: name });
    assert.deepEqual(
      rest.events.map((e) => e.id),
      [c.id],
    );
    assert.deepEqual(rest.events[0]!.data, c.data);
    await assert.rejects(consumers.ack(name, c.id + 1_000_000), RangeError);
    await assert.rejects(consumers.poll({ consumer: "Not A Name" }), RangeError);

    // Another consumer, filtered by type: its batch ends at the last event read.
    const typed = `typed-${uniqueTag()}`;
    await consumers.reset(typed, a.id);
    const created = await consumers.poll({ consumer: typed, type: "partner.user.created", partner });
    assert.deepEqual(
      created.events.map((e) => e.id),
      [c.id],
    );
    assert.equal(created.upTo, c.id);
    await consumers.ack(typed, created.upTo!);
    const state = (await consumers.consumers()).find((s) => s.name === typed)!;
    assert.equal(state.position, c.id);
    assert.equal(state.lagEvents, 0);
    await consumers.reset(typed, 0);
    assert.ok(((await consumers.consumers()).find((s) => s.name === typed)?.lagEvents ?? 0) >= 3);
    await consumers.close();
  });

  test("an id held by a transaction that commits late is handed out, not skipped (the outbox gap)", async () => {
    const store = new PostgresEventStore(db!.pool);
    const consumers = new PostgresEventConsumers(db!.pool, { connection: false });
    const name = `late-${uniqueTag()}`;
    const start = await consumers.poll({ consumer: name, limit: 10_000 });
    if (start.upTo !== undefined) await consumers.ack(name, start.upTo);
    const partner = `p-${uniqueTag()}`;
    const late: pg.PoolClient = await db!.pool.connect();
    try {
      await late.query("begin");
      const held = await late.query<{ id: string }>(
        `insert into events (partner_id, environment, idempotency_key, fingerprint, event_type, occurred_at,
           data, raw_body, received_at)
         values ($1, 'sandbox', $2, $3, 'partner.user.created', '2026-11-20T10:15:00Z', '{}', '{"data":{}}', now())
         returning id::text as id`,
        [partner, `late-${uniqueTag()}`, "b".repeat(64)],
      );
      const heldId = Number(held.rows[0]!.id);
      const after = await append(store, { partnerId: partner });
      assert.ok(after.id > heldId);
      // Committed, with a higher id, yet not handed out while the lower one may still commit.
      const meanwhile = await consumers.poll({ consumer: name, partner });
      assert.deepEqual(meanwhile.events, []);
      await late.query("commit");
      await settled();
      const batch = await consumers.poll({ consumer: name, partner });
      assert.deepEqual(
        batch.events.map((e) => e.id),
        [heldId, after.id],
      );
    } finally {
      late.release();
    }
    await consumers.close();
  });

  test("process: the handler writes in the checkpoint's transaction; a throw rolls both back; one name takes turns", async () => {
    await db!.pool.query(
      "create table if not exists handled (consumer text, event_id bigint, primary key (consumer, event_id))",
    );
    const store = new PostgresEventStore(db!.pool);
    const consumers = new PostgresEventConsumers(db!.pool, { connection: false });
    const name = `proc-${uniqueTag()}`;
    const partner = `p-${uniqueTag()}`;
    await consumers.reset(name, (await append(store, { partnerId: partner })).id);
    const events = [await append(store, { partnerId: partner }), await append(store, { partnerId: partner })];
    await settled();
    const write = async (batch: readonly StoredEvent[], client: pg.PoolClient) => {
      for (const e of batch) await client.query("insert into handled values ($1, $2)", [name, e.id]);
    };
    await assert.rejects(
      consumers.processBatch(name, async (batch, client) => {
        await write(batch, client);
        throw new Error("handler failed");
      }),
      /handler failed/,
    );
    const none = await db!.pool.query("select count(*)::int as n from handled where consumer = $1", [name]);
    assert.equal(none.rows[0].n, 0);

    // A consumer holding its turn: the other of the same name gets nothing meanwhile.
    let release = () => {};
    const holding = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = () => {};
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const first = consumers.processBatch(name, async (batch, client) => {
      entered();
      await holding;
      await write(batch, client);
    });
    await inHandler;
    assert.equal(await consumers.processBatch(name, write), 0);
    release();
    assert.equal(await first, 2);
    assert.equal(await consumers.processBatch(name, write), 0);
    const done = await db!.pool.query<{ event_id: string }>(
      "select event_id::text from handled where consumer = $1 order by event_id",
      [name],
    );
    assert.deepEqual(
      done.rows.map((r) => Number(r.event_id)),
      events.map((e) => e.id),
    );
    await consumers.close();
  });

  test("a commit wakes a waiting consumer (LISTEN/NOTIFY); iterateEvents and runConsumer hand out new events", async () => {
    const store = new PostgresEventStore(db!.pool);
    const consumers = new PostgresEventConsumers(db!.pool);
    const partner = `p-${uniqueTag()}`;
    // Subscribe, then wait far longer than the test: only the notification ends the wait.
    await consumers.waitForEvents(50);
    for (let i = 0; i < 100 && !consumers.listening; i++) await consumers.waitForEvents(20);
    assert.equal(consumers.listening, true);
    const woken = consumers.waitForEvents(600_000).then(() => "woken");
    const event = await append(store, { partnerId: partner });
    // A bound for a broken wake-up, not a timing assertion: the notification comes in milliseconds.
    assert.equal(
      await Promise.race([woken, sleep(15_000).then(() => "no notification within 15 s")]),
      "woken",
    );

    const controller = new AbortController();
    const name = `iter-${uniqueTag()}`;
    await consumers.reset(name, event.id);
    const next = append(store, { partnerId: partner });
    for await (const got of iterateEvents(consumers, {
      consumer: name,
      partner,
      signal: controller.signal,
    })) {
      assert.equal(got.id, (await next).id);
      controller.abort();
    }
    const seen: number[] = [];
    const stop = new AbortController();
    const running = runConsumer(
      consumers,
      name,
      async (batch) => {
        seen.push(...batch.map((e) => e.id));
        stop.abort();
      },
      // The default poll interval: a notification that came while another transaction on the
      // server held the horizon back (another test file's) is read at the next poll.
      { partner, signal: stop.signal, pollIntervalMs: 1000 },
    );
    const third = await append(store, { partnerId: partner });
    await running;
    assert.deepEqual(seen, [third.id], "the iterator acknowledged the event it handed out");
    await consumers.close();
  });
});

describe("pruneEvents", () => {
  test("deletes old acknowledged events only; a key inside the window keeps its event_id", async () => {
    const own = await testDatabase("prune");
    const store = new PostgresEventStore(own.pool);
    const consumers = new PostgresEventConsumers(own.pool, { connection: false });
    const day = 86_400_000;
    const old = Date.now() - 40 * day;
    const oldA = await append(store, { receivedAt: old });
    const oldB = await append(store, { receivedAt: old });
    const recentEvent = newEvent({ receivedAt: Date.now() - 2 * day });
    const recent = await store.append(recentEvent);
    assert.equal(recent.status, "created");
    // "slow" has acknowledged oldA only; "fast" everything.
    await consumers.ack("slow", oldA.id);
    await consumers.ack("fast", (recent as { event: StoredEvent }).event.id);
    await assert.rejects(pruneEvents(own.pool, 29), /at least 30/);
    const report = await pruneEvents(own.pool, 30);
    assert.deepEqual(report, { deleted: 1, keptUnacknowledged: 1 });
    const left = await own.pool.query<{ id: string }>("select id::text from events order by id");
    assert.deepEqual(
      left.rows.map((r) => Number(r.id)),
      [oldB.id, (recent as { event: StoredEvent }).event.id],
    );
    const again = await store.append(recentEvent);
    assert.equal(again.status, "duplicate");
    assert.equal((again as { event: StoredEvent }).event.id, (recent as { event: StoredEvent }).event.id);
    await consumers.ack("slow", (recent as { event: StoredEvent }).event.id);
    assert.deepEqual(await pruneEvents(own.pool, 30), { deleted: 1, keptUnacknowledged: 0 });
    await consumers.close();
  });
});
