/**
 * What a hostile or careless client cannot do to the core (issue 10): fill the in-memory event
 * store until the process dies, escape the failed-authentication limit by arriving without an
 * address, or smuggle a second value for a member past the JSON step.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  createPartnerApi,
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_MAX_EVENTS,
  type ErrorAnswer,
  MemoryEventStore,
  MemoryRateLimiter,
  type PlainRequest,
  Problem,
} from "../../src/index.js";
import { eventMemoryBytes } from "../../src/stores/event-store.js";
import { DEMO, loadSandbox, signedEventRequest } from "../sandbox.js";

const _encoder = new TextEncoder();

const eventRequest = signedEventRequest;

function userCreated(userId: string, extra = ""): string {
  return `{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"user_id":"${userId}"${extra}}}`;
}

describe("the in-memory event store is bounded (issue 10)", () => {
  test("past maxEvents a new event is 503 event_store_full with Retry-After; a duplicate still gets its original answer", async () => {
    const events = new MemoryEventStore({ maxEvents: 3 });
    const reported: ErrorAnswer[] = [];
    const api = createPartnerApi({
      environment: "sandbox",
      ...loadSandbox(),
      events,
      rateLimitOverride: 1000,
      onError: (_error, _id, answer) => reported.push(answer),
    });
    for (let i = 1; i <= 3; i++) {
      const res = await api.handle(eventRequest(userCreated(`u_${i}`), `k-${i}`));
      assert.equal(res.status, 200, res.body ?? "");
      assert.equal(JSON.parse(res.body!).event_id, i);
    }
    const full = await api.handle(eventRequest(userCreated("u_4"), "k-4"));
    assert.equal(full.status, 503, full.body ?? "");
    assert.equal(full.headers["content-type"], "application/problem+json; charset=utf-8");
    assert.equal(full.headers["retry-after"], "60");
    const problem = Problem.parse(JSON.parse(full.body!));
    assert.equal(problem.code, "event_store_full");
    assert.equal(problem.type, "https://partner-yield.dev/errors/event_store_full");
    assert.match(problem.detail, /PostgreSQL/);
    assert.match(problem.detail, /3 events/);
    assert.deepEqual(reported, [{ status: 503, code: "event_store_full" }], "the operator is told");
    assert.equal(events.size, 3);
    assert.equal(await events.find(DEMO.partnerId, "sandbox", "k-4"), undefined, "nothing stored");

    // Idempotency beats the bound: a retry of a stored event is still its duplicate…
    const again = await api.handle(eventRequest(userCreated("u_2"), "k-2"));
    assert.equal(again.status, 200, again.body ?? "");
    assert.deepEqual(JSON.parse(again.body!), { success: true, event_id: 2, duplicate: true });
    assert.equal(again.headers["idempotent-replayed"], "true");
    // …and a reuse of its key for another event is still 422.
    const reused = await api.handle(eventRequest(userCreated("u_other"), "k-2"));
    assert.equal(reused.status, 422);
    assert.equal(JSON.parse(reused.body!).code, "idempotency_key_reused");
    // The refused event can be sent again later with the same key: still refused, never half-stored.
    const retry = await api.handle(eventRequest(userCreated("u_4"), "k-4"));
    assert.equal(retry.status, 503);
    assert.equal(events.size, 3);
  });

  test("past maxEventBytes a new event is refused; a smaller one that fits is still stored", async () => {
    const small = userCreated("u_1");
    const big = userCreated("u_2", `,"blob":"${"x".repeat(10_000)}"`);
    const cost = (body: string, key: string) => {
      const parsed = JSON.parse(body);
      return eventMemoryBytes({
        partnerId: DEMO.partnerId,
        environment: "sandbox",
        idempotencyKey: key,
        fingerprint: "0".repeat(64),
        eventType: parsed.event_type,
        occurredAt: parsed.occurred_at,
        data: parsed.data,
        rawBody: body,
        receivedAt: 0,
      });
    };
    assert.ok(cost(big, "k-big") > 20_000, "a 10 KB body is charged at least twice its length");
    const events = new MemoryEventStore({ maxEventBytes: cost(small, "k-1") * 3 });
    const api = createPartnerApi({
      environment: "sandbox",
      ...loadSandbox(),
      events,
      rateLimitOverride: 1000,
    });
    assert.equal((await api.handle(eventRequest(small, "k-1"))).status, 200);
    const refused = await api.handle(eventRequest(big, "k-big"));
    assert.equal(refused.status, 503);
    assert.equal(JSON.parse(refused.body!).code, "event_store_full");
    assert.match(JSON.parse(refused.body!).detail, /bytes/);
    assert.equal((await api.handle(eventRequest(userCreated("u_3"), "k-3"))).status, 200);
    assert.ok(events.bytes <= cost(small, "k-1") * 3);
    assert.equal(events.size, 2);
  });

  test("the default store is bounded: 100,000 events, 256 MiB", async () => {
    assert.equal(DEFAULT_MAX_EVENTS, 100_000);
    assert.equal(DEFAULT_MAX_EVENT_BYTES, 256 * 1024 * 1024);
    // The defaults are the bounds of a store built without options: a 200 KB body counts more than
    // 400 KB, so 700 of them pass 256 MiB well before 100,000 events.
    const store = new MemoryEventStore();
    const blob = "y".repeat(200_000);
    let refusedAt = 0;
    for (let i = 0; i < 700 && refusedAt === 0; i++) {
      const result = await store.append({
        partnerId: "p",
        environment: "sandbox",
        idempotencyKey: `k${i}`,
        fingerprint: String(i).padStart(64, "0"),
        eventType: "partner.user.created",
        occurredAt: "2026-11-20T10:15:00Z",
        data: { blob },
        rawBody: blob,
        receivedAt: 0,
      });
      if (result.status === "full") refusedAt = i;
    }
    assert.ok(refusedAt > 300 && refusedAt < 700, `refused at ${refusedAt}`);
    assert.ok(store.bytes <= DEFAULT_MAX_EVENT_BYTES);
    assert.throws(() => new MemoryEventStore({ maxEvents: 0 }), RangeError);
    assert.throws(() => new MemoryEventStore({ maxEventBytes: 1.5 }), RangeError);
  });
});

describe("failed authentication without a client address (issue 10)", () => {
  test("requests with no clientAddress share one bucket: 429 after the limit, never unlimited", async () => {
    const api = createPartnerApi({
      environment: "sandbox",
      ...loadSandbox(),
      failedAuthPerMinute: 5,
      rateLimiter: new MemoryRateLimiter(),
    });
    const bad = (i: number): PlainRequest => ({
      method: "GET",
      path: "/api/partner/products",
      headers: { "x-api-key": `ypk_test_${String(i).padStart(38, "A")}` },
      clientAddress: undefined,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await api.handle(bad(i))).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    const blocked = await api.handle(bad(99));
    assert.equal(JSON.parse(blocked.body!).code, "rate_limited");
    assert.ok(Number(blocked.headers["retry-after"]) >= 1);
    // The bucket is theirs alone: a client with an address is not blocked by it.
    const withAddress = await api.handle({ ...bad(100), clientAddress: "192.0.2.77" });
    assert.equal(withAddress.status, 401);
  });
});

describe("a JSON body with a duplicate member name is refused (issue 10)", () => {
  const api = createPartnerApi({ environment: "sandbox", ...loadSandbox(), rateLimitOverride: 100_000 });

  async function refusal(body: string) {
    const res = await api.handle(eventRequest(body, `k-${crypto.randomUUID()}`));
    return {
      status: res.status,
      problem: res.status === 200 ? undefined : Problem.parse(JSON.parse(res.body!)),
    };
  }

  test("event_type twice: 400 invalid_json naming /body/event_type, nothing stored", async () => {
    const before = (await api.events.list()).length;
    const body =
      '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{},"event_type":"partner.reconciliation.confirmed"}';
    const { status, problem } = await refusal(body);
    assert.equal(status, 400);
    assert.equal(problem!.code, "invalid_json");
    assert.match(problem!.detail, /\/body\/event_type/);
    assert.deepEqual(problem!.errors, [{ pointer: "/body/event_type", detail: "duplicate member name" }]);
    assert.equal((await api.events.list()).length, before);
  });

  test("nested, escaped and deep duplicates are found with their JSON Pointer", async () => {
    const head = '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":';
    const cases: [string, string][] = [
      ['{"user_id":"u_1","user_id":"u_2"}', "/body/data/user_id"],
      ['{"a":{"b":1,"c":{"d":1,"d":2}}}', "/body/data/a/c/d"],
      ['{"list":[{"x":1},{"y":1,"y":2}]}', "/body/data/list/1/y"],
      ['{"u\\u0073er":1,"user":2}', "/body/data/user"], // the same name, escaped differently
      ['{"a/b~c":1,"a/b~c":2}', "/body/data/a~1b~0c"],
      ['{"__proto__":{},"__proto__":[]}', "/body/data/__proto__"],
      ['{"":1,"":2}', "/body/data/"],
    ];
    for (const [data, pointer] of cases) {
      const { status, problem } = await refusal(`${head}${data}}`);
      assert.equal(status, 400, data);
      assert.equal(problem!.code, "invalid_json", data);
      assert.equal(problem!.errors?.[0]?.pointer, pointer, data);
    }
  });

  test("the same names in different objects, in strings or as values are not duplicates", async () => {
    const head = '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":';
    for (const data of [
      '{"a":{"x":1},"b":{"x":1}}',
      '{"a":"\\"a\\":1","b":"a"}',
      '{"list":[{"x":1},{"x":2}],"x":"x"}',
      '{"a\\\\":1,"a":2}',
      '{"event_type":"partner.user.created"}',
    ]) {
      const { status, problem } = await refusal(`${head}${data}}`);
      assert.equal(status, 200, `${data}: ${JSON.stringify(problem)}`);
    }
  });
});
