import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { halfSipHash24 } from "../../src/encoding/half-siphash.js";
import { createPartnerApi, MemoryEventStore } from "../../src/index.js";
import {
  eventMemoryBytes,
  type NewEvent,
  type StoredEvent,
  valueMemoryBytes,
} from "../../src/stores/event-store.js";
import { newEvent } from "../../src/testing/event-store-suite.js";
import { fcParams } from "../../src/testing/index.js";
import { DEMO, loadSandbox, signedEventRequest } from "../sandbox.js";

test("an event whose data comes from its raw body is charged without its data tree (it is not held twice)", async () => {
  const data = { user_id: "u_1", items: Array.from({ length: 50 }, (_, i) => ({ i, name: `n${i}` })) };
  const held = newEvent({ data, dataFromRawBody: true });
  const both = newEvent({ data });
  assert.equal(
    eventMemoryBytes(both) - eventMemoryBytes({ ...both, dataFromRawBody: true }),
    valueMemoryBytes(data),
  );
  const store = new MemoryEventStore();
  await store.append(held);
  assert.equal(store.bytes, eventMemoryBytes(held));
  await store.append(both);
  assert.equal(store.bytes, eventMemoryBytes(held) + eventMemoryBytes(both));
  assert.ok(eventMemoryBytes(held) < eventMemoryBytes(both));
});

test("the API appends events as parsed from their raw body: the store charges no data tree, and reads the data back", async () => {
  const events = new MemoryEventStore();
  const api = createPartnerApi({ environment: "sandbox", ...loadSandbox(), events, rateLimitOverride: 1000 });
  const body =
    '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"user_id":"u_9","tags":["a","b"]}}';
  const res = await api.handle(signedEventRequest(body, "k-lazy-1"));
  assert.equal(res.status, 200, res.body ?? "");
  const found = await events.find(DEMO.partnerId, "sandbox", "k-lazy-1");
  assert.deepEqual(found?.data, { user_id: "u_9", tags: ["a", "b"] });
  assert.equal(found?.rawBody, body);
  assert.equal(events.bytes, eventMemoryBytes({ ...found!, dataFromRawBody: true }));
  assert.ok(events.bytes < eventMemoryBytes({ ...found!, dataFromRawBody: undefined }));
});

test("a duplicate of an event held as its raw body is answered without parsing that body; its data is parsed when read", async () => {
  const store = new MemoryEventStore();
  const rawBody = '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"n":1}}';
  const event = newEvent({ data: { n: 1 }, rawBody, dataFromRawBody: true });
  await store.append(event);
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    parsed++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    const again = await store.append(event);
    assert.equal(again.status, "duplicate");
    assert.equal(parsed, 0, "the duplicate's answer parsed nothing");
    assert.deepEqual(again.status === "duplicate" ? again.event.data : undefined, { n: 1 });
    assert.equal(parsed, 1, "data is parsed once, when read");
  } finally {
    JSON.parse = parse;
  }
});

/** Any UTF-16 code unit, lone surrogates included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u));
const text = fc.string({ unit: fc.oneof(fc.constantFrom("a", "k", "-", "é"), anyUnit), maxLength: 12 });

test("a model check: appends, duplicates, conflicts, find and list agree with a plain Map of what was stored", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          partnerId: fc.constantFrom("p1", "p2", "pé"),
          environment: fc.constantFrom("sandbox" as const, "production" as const),
          idempotencyKey: fc.constantFrom("k1", "k2", "k\ud800", "k😀"),
          fingerprint: fc.constantFrom("a".repeat(64), "b".repeat(64)),
          eventType: text,
          occurredAt: text,
          body: text,
          receivedAt: fc.double(),
          dataFromRawBody: fc.boolean(),
        }),
        { maxLength: 40 },
      ),
      async (appends) => {
        const store = new MemoryEventStore();
        const model = new Map<string, StoredEvent>();
        const stored: StoredEvent[] = [];
        for (const a of appends) {
          const rawBody = JSON.stringify({
            event_type: a.eventType,
            occurred_at: a.occurredAt,
            data: { b: a.body },
          });
          const event: NewEvent = {
            partnerId: a.partnerId,
            environment: a.environment,
            idempotencyKey: a.idempotencyKey,
            fingerprint: a.fingerprint,
            eventType: a.eventType,
            occurredAt: a.occurredAt,
            data: { b: a.body },
            rawBody,
            receivedAt: a.receivedAt,
            ...(a.dataFromRawBody ? { dataFromRawBody: true } : {}),
          };
          const scope = JSON.stringify([a.partnerId, a.environment, a.idempotencyKey]);
          const before = model.get(scope);
          const result = await store.append(event);
          if (before === undefined) {
            assert.equal(result.status, "created");
            const created = { ...event, id: stored.length + 1 };
            assert.deepEqual(result.status === "created" ? result.event : undefined, created);
            model.set(scope, created);
            stored.push(created);
          } else {
            assert.equal(result.status, before.fingerprint === a.fingerprint ? "duplicate" : "conflict");
            assert.deepEqual(plain("event" in result ? result.event : undefined), plain(before));
          }
        }
        assert.equal(store.size, stored.length);
        assert.equal(
          store.bytes,
          stored.reduce((sum, e) => sum + eventMemoryBytes(e), 0),
        );
        for (const e of stored) {
          assert.deepEqual(plain(await store.find(e.partnerId, e.environment, e.idempotencyKey)), plain(e));
        }
        assert.deepEqual((await store.list(0, 1000)).map(plain), stored.map(plain));
        assert.deepEqual((await store.list(1, 2)).map(plain), stored.slice(1, 3).map(plain));
        assert.deepEqual(await store.list(0, 0), []);
        assert.deepEqual(await store.list(stored.length, 10), []);
        assert.equal(await store.find("p3", "sandbox", "k1"), undefined);
      },
    ),
    fcParams(process.env),
  );
});

/** An event as its fields read (a getter's value included), the flag of how `data` was held left out. */
function plain(event: StoredEvent | undefined): object | undefined {
  if (event === undefined) return undefined;
  const { dataFromRawBody: _held, ...fields } = event;
  return { ...fields, data: event.data };
}

test("events held across many chunks read back: 3,000 events of 1 KiB, by list and by find", async () => {
  const store = new MemoryEventStore();
  const events = Array.from({ length: 3000 }, (_, i) =>
    newEvent({
      partnerId: "p-chunks",
      idempotencyKey: `k-${i}`,
      data: { i, pad: "x".repeat(1000) },
      dataFromRawBody: true,
    }),
  );
  for (const e of events) assert.equal((await store.append(e)).status, "created");
  const listed = await store.list(0, 5000);
  assert.equal(listed.length, 3000);
  listed.forEach((e, i) => {
    assert.equal(e.id, i + 1);
    assert.equal(e.rawBody, events[i]!.rawBody);
    assert.deepEqual(e.data, events[i]!.data);
  });
  for (const i of [0, 1, 63, 64, 999, 2999]) {
    assert.equal((await store.find("p-chunks", "sandbox", `k-${i}`))?.id, i + 1);
  }
});

test("two scopes whose index hashes are equal are two events: found apart, each a duplicate of itself only", async () => {
  const key = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const k0 = key[0]! | (key[1]! << 8) | (key[2]! << 16) | (key[3]! << 24);
  const k1 = key[4]! | (key[5]! << 8) | (key[6]! << 16) | (key[7]! << 24);
  // The store hashes the scope's code units, two bytes each, each part ended by a 0 unit.
  const hash = (idempotencyKey: string) => {
    const units = [..."p1\0sandbox\0", ...`${idempotencyKey}\0`].map((c) => c.charCodeAt(0));
    const bytes = Uint8Array.from(units.flatMap((u) => [u & 0xff, u >>> 8]));
    return halfSipHash24(k0, k1, bytes, bytes.length);
  };
  // A birthday search: 32-bit hashes of a few hundred thousand keys hold a collision.
  const seen = new Map<number, string>();
  let pair: [string, string] | undefined;
  for (let i = 0; pair === undefined && i < 1_000_000; i++) {
    const k = `k-${i}`;
    const h = hash(k);
    const other = seen.get(h);
    if (other !== undefined) pair = [other, k];
    else seen.set(h, k);
  }
  assert.ok(pair !== undefined, "no colliding keys found");
  const store = new MemoryEventStore({ random: () => key.slice() });
  const [a, b] = pair.map((k, i) => newEvent({ idempotencyKey: k, fingerprint: String(i).repeat(64) }));
  const first = await store.append(a!);
  const second = await store.append(b!);
  assert.deepEqual([first.status, second.status], ["created", "created"]);
  assert.equal((await store.find("p1", "sandbox", pair[0]))?.id, 1);
  assert.equal((await store.find("p1", "sandbox", pair[1]))?.id, 2);
  const again = await store.append(b!);
  assert.equal(again.status, "duplicate");
  assert.equal("event" in again ? again.event.id : 0, 2);
  assert.equal((await store.append({ ...a!, fingerprint: "f".repeat(64) })).status, "conflict");
});

test("the index holds many events: 20,000 keys through several rehashes, each found", async () => {
  const store = new MemoryEventStore();
  for (let i = 0; i < 20_000; i++) {
    assert.equal((await store.append(newEvent({ idempotencyKey: `many-${i}` }))).status, "created");
  }
  for (let i = 0; i < 20_000; i += 997) {
    assert.equal((await store.find("p1", "sandbox", `many-${i}`))?.id, i + 1);
  }
  assert.equal(await store.find("p1", "sandbox", "many-20000"), undefined);
  assert.equal((await store.append(newEvent({ idempotencyKey: "many-123" }))).status, "duplicate");
});
