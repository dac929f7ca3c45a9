/**
 * `MemoryEventConsumers`, the consumer port over the in-memory store: poll and ack (only forward),
 * filters passing over other events, `process` rolling nothing forward when the handler throws and
 * taking turns per name, `iterateEvents` acknowledging what it handed out, and the operator's view.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  iterateEvents,
  MemoryEventConsumers,
  MemoryEventStore,
  runConsumer,
  type StoredEvent,
} from "../../src/index.js";
import { newEvent } from "../../src/testing/index.js";

async function filled(n: number): Promise<{ store: MemoryEventStore; events: StoredEvent[] }> {
  const store = new MemoryEventStore();
  const events: StoredEvent[] = [];
  for (let i = 0; i < n; i++) {
    const result = await store.append(
      newEvent({
        partnerId: i % 2 === 0 ? "p1" : "p2",
        eventType: i % 3 === 0 ? "partner.kyc.updated" : "partner.user.created",
      }),
    );
    assert.equal(result.status, "created");
    events.push((result as { event: StoredEvent }).event);
  }
  return { store, events };
}

test("poll from the checkpoint, ack only forward, filters pass over the others", async () => {
  const { store, events } = await filled(6);
  const consumers = new MemoryEventConsumers(store);
  const batch = await consumers.poll({ consumer: "ledger", limit: 4 });
  assert.deepEqual(
    batch.events.map((e) => e.id),
    events.slice(0, 4).map((e) => e.id),
  );
  assert.equal(await consumers.ack("ledger", batch.upTo!), true);
  assert.equal(await consumers.ack("ledger", 1), false);
  await assert.rejects(consumers.ack("ledger", 99), RangeError);
  await assert.rejects(consumers.poll({ consumer: "Ledger" }), RangeError);
  const p2 = await consumers.poll({ consumer: "p2-only", partner: "p2" });
  assert.deepEqual(
    p2.events.map((e) => e.partnerId),
    ["p2", "p2", "p2"],
  );
  assert.equal(p2.upTo, 6);
  const [ledger] = await consumers.consumers();
  assert.equal(ledger!.name, "ledger");
  assert.equal(ledger!.position, 4);
  assert.equal(ledger!.lagEvents, 2);
  await consumers.reset("ledger", 0);
  assert.equal((await consumers.consumers())[0]!.lagEvents, 6);
});

test("process: a handler that throws moves nothing; consumers of one name take turns", async () => {
  const { store } = await filled(3);
  const consumers = new MemoryEventConsumers(store);
  await assert.rejects(
    consumers.processBatch("ledger", () => Promise.reject(new Error("boom"))),
    /boom/,
  );
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const first = consumers.processBatch("ledger", () => held);
  assert.equal(await consumers.processBatch("ledger", () => Promise.resolve()), 0);
  release();
  assert.equal(await first, 3);
  assert.equal(await consumers.processBatch("ledger", () => Promise.resolve()), 0);
});

test("iterateEvents acknowledges each event once the loop asks for the next; runConsumer stops on abort", async () => {
  const { store, events } = await filled(3);
  const consumers = new MemoryEventConsumers(store);
  const seen: number[] = [];
  for await (const event of iterateEvents(consumers, { consumer: "tail" })) {
    seen.push(event.id);
    if (event.id === 2) break;
  }
  // Event 2 was being handled when the loop left: it comes again.
  assert.deepEqual(seen, [1, 2]);
  assert.equal((await consumers.poll({ consumer: "tail" })).events[0]!.id, 2);
  const controller = new AbortController();
  const handled: number[] = [];
  const count = await runConsumer(
    consumers,
    "run",
    async (batch) => {
      handled.push(...batch.map((e) => e.id));
      controller.abort();
    },
    { signal: controller.signal },
  );
  assert.equal(count, 3);
  assert.deepEqual(
    handled,
    events.map((e) => e.id),
  );
});
