/**
 * The EventStore contract as a suite, run against every backend (memory now; PostgreSQL and others
 * plug in by calling `runEventStoreSuite` with their factory).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EventStore, NewEvent } from "../src/index.js";

export function newEvent(overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    partnerId: "p1",
    environment: "sandbox",
    idempotencyKey: `k-${crypto.randomUUID()}`,
    fingerprint: "a".repeat(64),
    eventType: "partner.user.created",
    occurredAt: "2026-11-20T10:15:00Z",
    data: { user_id: "u1" },
    rawBody: "{}",
    receivedAt: 1,
    ...overrides,
  };
}

export function runEventStoreSuite(name: string, makeStore: () => Promise<EventStore>): void {
  describe(`EventStore suite: ${name}`, () => {
    test("a new key is created with a positive id; the same key and fingerprint is a duplicate", async () => {
      const store = await makeStore();
      const e = newEvent();
      const first = await store.append(e);
      assert.equal(first.status, "created");
      assert.ok(first.status === "created" && first.event.id > 0);
      const again = await store.append({ ...e, receivedAt: 2 });
      assert.equal(again.status, "duplicate");
      assert.ok(
        again.status === "duplicate" && first.status === "created" && again.event.id === first.event.id,
      );
      assert.equal(
        (await store.find("p1", "sandbox", e.idempotencyKey))?.id,
        first.status === "created" ? first.event.id : -1,
      );
      await store.close();
    });
    test("the same key with another fingerprint is a conflict and changes nothing", async () => {
      const store = await makeStore();
      const e = newEvent();
      await store.append(e);
      const other = await store.append({ ...e, fingerprint: "b".repeat(64), rawBody: '{"x":1}' });
      assert.equal(other.status, "conflict");
      assert.equal((await store.find("p1", "sandbox", e.idempotencyKey))?.rawBody, "{}");
      await store.close();
    });
    test("scope is (partner, environment, key)", async () => {
      const store = await makeStore();
      const key = `k-${crypto.randomUUID()}`;
      const results = await Promise.all([
        store.append(newEvent({ idempotencyKey: key })),
        store.append(newEvent({ idempotencyKey: key, partnerId: "p2" })),
        store.append(newEvent({ idempotencyKey: key, environment: "production" })),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ["created", "created", "created"],
      );
      await store.close();
    });
    test("ids increase in acceptance order and list returns them in order", async () => {
      const store = await makeStore();
      const ids: number[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await store.append(newEvent());
        if (r.status === "created") ids.push(r.event.id);
      }
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      );
      const listed = await store.list(ids[0]! - 1, 20);
      assert.deepEqual(
        listed.map((e) => e.id),
        ids,
      );
      await store.close();
    });
    test("under concurrency one key yields exactly one event", async () => {
      const store = await makeStore();
      const e = newEvent();
      const results = await Promise.all(Array.from({ length: 100 }, () => store.append(e)));
      assert.equal(results.filter((r) => r.status === "created").length, 1);
      assert.equal(results.filter((r) => r.status === "duplicate").length, 99);
      await store.close();
    });
  });
}
