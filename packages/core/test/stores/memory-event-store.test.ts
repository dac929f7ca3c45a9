import assert from "node:assert/strict";
import { test } from "node:test";
import { createPartnerApi, eventMemoryBytes, MemoryEventStore } from "../../src/index.js";
import { valueMemoryBytes } from "../../src/stores/event-store.js";
import { newEvent } from "../../src/testing/event-store-suite.js";
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
