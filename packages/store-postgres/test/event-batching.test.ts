/**
 * `PostgresEventStore` groups concurrent appends into one insert (group commit). Each append must
 * get the answer it would get alone: these tests send the same events in one batch and one at a
 * time (under another partner, so to a store that holds none of them) and compare; they count the
 * statements sent, fail a batch's statement, and page through the log while batches commit.
 */
import assert from "node:assert/strict";
import { type AppendResult, type NewEvent, StoreUnavailableError } from "@partner-yield/core";
import { newEvent, uniqueTag } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import type pg from "pg";
import type { PostgresEventStoreOptions } from "../src/event-store.js";
import { createPool, PostgresEventStore } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("batching") : undefined;

/** A store over the file's pool that records the text of every statement it sends. */
function countingStore(options: PostgresEventStoreOptions = {}): {
  store: PostgresEventStore;
  inserts: () => number;
  statements: string[];
} {
  const statements: string[] = [];
  const pool = {
    query: (text: string | pg.QueryConfig, values?: unknown[]) => {
      // The insert is a named statement (a config object); the reads are plain text.
      statements.push(typeof text === "string" ? text : text.text);
      return typeof text === "string" ? db!.pool.query(text, values) : db!.pool.query(text);
    },
    connect: () => db!.pool.connect(),
  } as unknown as pg.Pool;
  return {
    store: new PostgresEventStore(pool, undefined, options),
    inserts: () => statements.filter((s) => s.includes("partner_yield_append_events(")).length,
    statements,
  };
}

/**
 * An answer as the core reads it: the status and, when there is one, the submission it names (by
 * its place among `results`), or the key and fingerprint of an event stored before them.
 */
function outcome(result: AppendResult, ids: ReadonlyMap<number, number>): string {
  if (!("event" in result)) return result.status;
  const place = ids.get(result.event.id);
  return place === undefined
    ? `${result.status} of earlier ${result.event.idempotencyKey} ${result.event.fingerprint}`
    : `${result.status} of #${place}`;
}

/** The answers to a list of submissions, each read as `outcome`. */
function outcomes(results: readonly AppendResult[]): string[] {
  const ids = new Map<number, number>();
  for (const [i, r] of results.entries()) if (r.status === "created") ids.set(r.event.id, i);
  return results.map((r) => outcome(r, ids));
}

/** The same submissions one after the other, each awaited. */
async function oneAtATime(store: PostgresEventStore, events: readonly NewEvent[]): Promise<AppendResult[]> {
  const results: AppendResult[] = [];
  for (const e of events) results.push(await store.append(e));
  return results;
}

/** `events` as submissions of another partner: the same keys and bodies, in a scope of their own. */
function underPartner(events: readonly NewEvent[], from: string, to: string): NewEvent[] {
  return events.map((e) => ({ ...e, partnerId: e.partnerId === from ? to : e.partnerId }));
}

describe("PostgresEventStore: concurrent appends share one insert", () => {
  test("the appends of one turn go out as one statement, each created with its own id", async () => {
    const { store, inserts } = countingStore();
    const p = `p-${uniqueTag()}`;
    const events = Array.from({ length: 50 }, (_, n) => newEvent({ partnerId: p, data: { n } }));
    const results = await Promise.all(events.map((e) => store.append(e)));
    assert.equal(inserts(), 1);
    assert.ok(results.every((r) => r.status === "created"));
    const ids = results.map((r) => (r.status === "created" ? r.event.id : 0));
    assert.equal(new Set(ids).size, 50);
    for (const [i, e] of events.entries()) {
      const found = await store.find(p, "sandbox", e.idempotencyKey);
      assert.equal(found?.id, ids[i]);
      assert.deepEqual(found?.data, { n: i });
    }
  });

  test("a lone append goes out at once: its statement is sent before the next microtask", async () => {
    const { store, statements } = countingStore();
    const pending = store.append(newEvent({ partnerId: `p-${uniqueTag()}` }));
    await Promise.resolve();
    assert.equal(statements.length, 1);
    assert.equal((await pending).status, "created");
  });

  test("maxBatch bounds a statement: 25 appends with maxBatch 10 are three inserts", async () => {
    const { store, inserts } = countingStore({ maxBatch: 10, maxInFlight: 1 });
    const p = `p-${uniqueTag()}`;
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, n) => store.append(newEvent({ partnerId: p, data: { n } }))),
    );
    assert.equal(inserts(), 3);
    assert.ok(results.every((r) => r.status === "created"));
  });

  test("appends made while every slot is in flight go out together in the next statement", async () => {
    const { store, inserts } = countingStore({ maxInFlight: 1 });
    const p = `p-${uniqueTag()}`;
    const first = store.append(newEvent({ partnerId: p }));
    await Promise.resolve(); // the first is in flight
    const rest = Array.from({ length: 20 }, () => store.append(newEvent({ partnerId: p })));
    const results = await Promise.all([first, ...rest]);
    assert.equal(inserts(), 2);
    assert.ok(results.every((r) => r.status === "created"));
  });

  test("one key twice in a batch: the second is judged against the first (duplicate or conflict), as one after the other", async () => {
    const { store, inserts } = countingStore();
    const p = `p-${uniqueTag()}`;
    const key = `k-${uniqueTag()}`;
    const a = newEvent({ partnerId: p, idempotencyKey: key, fingerprint: "1".repeat(64), data: { a: 1 } });
    const b = newEvent({ partnerId: p, idempotencyKey: key, fingerprint: "2".repeat(64), data: { b: 2 } });
    const other = newEvent({ partnerId: p });
    const batch = [a, a, b, other, b, a];
    const together = await Promise.all(batch.map((e) => store.append(e)));
    assert.equal(inserts(), 1);
    assert.deepEqual(outcomes(together), [
      "created of #0",
      "duplicate of #0",
      "conflict of #0",
      "created of #3",
      "conflict of #0",
      "duplicate of #0",
    ]);
    const q = `p-${uniqueTag()}`;
    assert.deepEqual(outcomes(together), outcomes(await oneAtATime(store, underPartner(batch, p, q))));
    const stored = await store.find(p, "sandbox", key);
    assert.equal(stored?.fingerprint, a.fingerprint);
    assert.equal(stored?.rawBody, a.rawBody);
  });

  test("a mix of new keys, duplicates and conflicts in one batch gets the answers of the same events one at a time", async () => {
    const { store, inserts } = countingStore();
    const p = `p-${uniqueTag()}`;
    const q = `p-${uniqueTag()}`;
    const keys = Array.from({ length: 10 }, (_, k) => `k-${k}-${uniqueTag()}`);
    const submission = (i: number) =>
      newEvent({
        partnerId: p,
        idempotencyKey: keys[(i * 7) % keys.length]!,
        fingerprint: String(i % 3).repeat(64),
        data: { i },
      });
    // Keys 0–2 are held before the batch, in both scopes.
    const earlier = [0, 1, 2].map((k) =>
      newEvent({ partnerId: p, idempotencyKey: keys[k]!, fingerprint: "0".repeat(64) }),
    );
    for (const e of [...earlier, ...underPartner(earlier, p, q)])
      assert.equal((await store.append(e)).status, "created");
    const batch = Array.from({ length: 40 }, (_, i) => submission(i));
    const before = inserts();
    const together = await Promise.all(batch.map((e) => store.append(e)));
    assert.equal(inserts() - before, 1);
    const alone = await oneAtATime(store, underPartner(batch, p, q));
    assert.deepEqual(outcomes(together), outcomes(alone));
    const statuses = new Set(together.map((r) => r.status));
    assert.deepEqual([...statuses].sort(), ["conflict", "created", "duplicate"]);
  });

  test("a batch whose statement fails: every append in it is a StoreUnavailableError and none is stored", async () => {
    // A pool whose statements give up after 300 ms, while another session holds the table.
    const impatient = createPool({ connectionString: db!.url, statementTimeoutMs: 300 });
    const store = new PostgresEventStore(impatient);
    const holder = await db!.pool.connect();
    const p = `p-${uniqueTag()}`;
    const key = `k-${uniqueTag()}`;
    const events = [
      ...Array.from({ length: 10 }, () => newEvent({ partnerId: p })),
      newEvent({ partnerId: p, idempotencyKey: key }),
      newEvent({ partnerId: p, idempotencyKey: key, fingerprint: "b".repeat(64) }),
    ];
    try {
      await holder.query("begin");
      await holder.query("lock table events in share mode");
      const settled = await Promise.allSettled(events.map((e) => store.append(e)));
      for (const s of settled) {
        assert.equal(s.status, "rejected");
        assert.ok(s.status === "rejected" && s.reason instanceof StoreUnavailableError, String(s));
        assert.match((s as PromiseRejectedResult).reason.message, /storing an event failed/);
      }
    } finally {
      await holder.query("rollback");
      holder.release();
    }
    for (const e of events) assert.equal(await store.find(p, "sandbox", e.idempotencyKey), undefined);
    // The store recovers by itself: the same events are accepted now, as new.
    const again = await Promise.all(events.map((e) => store.append(e)));
    assert.deepEqual(
      again.map((r) => r.status),
      [...Array(11).fill("created"), "conflict"],
    );
    await impatient.end();
  });

  test("an event the database refuses fails alone: the rest of its batch is stored", async () => {
    const { store, inserts } = countingStore();
    const p = `p-${uniqueTag()}`;
    // The schema checks the fingerprint (64 lowercase hex digits); a store's caller could send anything.
    const refused = newEvent({ partnerId: p, fingerprint: "not a sha-256" });
    const events = [newEvent({ partnerId: p }), refused, newEvent({ partnerId: p })];
    const settled = await Promise.allSettled(events.map((e) => store.append(e)));
    assert.ok(inserts() > 1, "the batch's statement failed and each key was sent again");
    assert.equal(settled[0]!.status, "fulfilled");
    assert.equal(settled[2]!.status, "fulfilled");
    const failed = settled[1]!;
    assert.ok(failed.status === "rejected" && failed.reason instanceof StoreUnavailableError);
    // Alone, it gets the same answer.
    await assert.rejects(
      store.append({ ...refused, idempotencyKey: `k-${uniqueTag()}` }),
      StoreUnavailableError,
    );
    assert.equal(await store.find(p, "sandbox", refused.idempotencyKey), undefined);
    for (const i of [0, 2]) assert.ok(await store.find(p, "sandbox", events[i]!.idempotencyKey));
  });

  test("a reader paging by the last id seen misses no event while batches commit", async () => {
    const store = new PostgresEventStore(db!.pool, undefined, { maxInFlight: 4 });
    const p = `p-${uniqueTag()}`;
    const created: number[] = [];
    let writing = true;
    const writer = (async () => {
      try {
        for (let wave = 0; wave < 20; wave++) {
          const results = await Promise.all(
            Array.from({ length: 30 }, (_, n) => store.append(newEvent({ partnerId: p, data: { wave, n } }))),
          );
          for (const r of results) if (r.status === "created") created.push(r.event.id);
        }
      } finally {
        writing = false;
      }
    })();
    const seen: number[] = [];
    let after = (await store.list(0, 1_000_000_000)).at(-1)?.id ?? 0;
    for (;;) {
      const stillWriting = writing;
      const page = await store.list(after, 50);
      for (const e of page) {
        assert.ok(e.id > after);
        if (e.partnerId === p) seen.push(e.id);
      }
      if (page.length > 0) after = page.at(-1)!.id;
      else if (!stillWriting) break;
    }
    await writer;
    assert.equal(created.length, 600);
    assert.deepEqual(
      seen,
      [...created].sort((x, y) => x - y),
    );
  });

  test("a batch waits while a reader holds the log (what list's no-skip guarantee rests on)", async () => {
    const store = new PostgresEventStore(db!.pool);
    const reader = await db!.pool.connect();
    const p = `p-${uniqueTag()}`;
    let stored = false;
    try {
      await reader.query("begin");
      // What list() takes for its read.
      await reader.query("select pg_advisory_xact_lock(7263002)");
      const appends = Promise.all(Array.from({ length: 5 }, () => store.append(newEvent({ partnerId: p }))));
      void appends.then(() => (stored = true));
      // Until the insert is seen waiting on the lock (or, wrongly, has stored without it).
      for (;;) {
        const waiting = await db!.pool.query(
          "select 1 from pg_locks where locktype = 'advisory' and objid = 7263002 and not granted",
        );
        if (waiting.rowCount! > 0 || stored) break;
      }
      assert.equal(stored, false, "the batch was stored while a reader held the log");
      await reader.query("commit");
      assert.ok((await appends).every((r) => r.status === "created"));
    } finally {
      await reader.query("rollback").catch(() => undefined);
      reader.release();
    }
  });

  test("200 concurrent appends of one key through batches: one event, the rest duplicates of it", async () => {
    const { store } = countingStore({ maxBatch: 16 });
    const e = newEvent({ partnerId: `p-${uniqueTag()}` });
    const results = await Promise.all(Array.from({ length: 200 }, () => store.append(e)));
    assert.equal(results.filter((r) => r.status === "created").length, 1);
    assert.equal(results.filter((r) => r.status === "duplicate").length, 199);
    assert.equal(new Set(results.map((r) => ("event" in r ? r.event.id : 0))).size, 1);
  });

  test("close waits for the appends in flight and queued, then releases", async () => {
    const order: string[] = [];
    const store = new PostgresEventStore(
      db!.pool,
      async () => {
        order.push("released");
      },
      { maxInFlight: 1, maxBatch: 2 },
    );
    const p = `p-${uniqueTag()}`;
    const appends = Array.from({ length: 5 }, (_, n) =>
      store.append(newEvent({ partnerId: p })).then((r) => order.push(`${n} ${r.status}`)),
    );
    await Promise.all([store.close(), store.close()]);
    await Promise.all(appends);
    assert.deepEqual(order.slice(0, 5).sort(), [
      "0 created",
      "1 created",
      "2 created",
      "3 created",
      "4 created",
    ]);
    assert.deepEqual(order.slice(5), ["released", "released"]);
  });

  test("bounds must be positive integers", async () => {
    assert.throws(() => new PostgresEventStore(db!.pool, undefined, { maxBatch: 0 }), RangeError);
    assert.throws(() => new PostgresEventStore(db!.pool, undefined, { maxInFlight: 1.5 }), RangeError);
  });
});
