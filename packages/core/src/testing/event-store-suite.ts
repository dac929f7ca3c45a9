/**
 * The `EventStore` contract (CONTRACT §5) as a suite, written once and run against every backend:
 * idempotency scope, duplicates and conflicts, ids in acceptance order, paging, exact round trip
 * of what was stored, and one event per key under 200 concurrent submissions.
 *
 * @example
 * import { describe, test } from "vitest"; // or node:test, or bun:test
 * runEventStoreSuite({ name: "memory", makeStore: async () => new MemoryEventStore(), describe, test });
 */
import type { EventStore, NewEvent, StoredEvent } from "../stores/event-store.js";
import { assertDeepEqual, assertEqual, assertTrue } from "./assertions.js";
import { type SuiteOptions, uniqueTag, using } from "./suite.js";

export interface EventStoreSuiteOptions extends SuiteOptions {
  /**
   * A store to test. It may share its backend with the other tests of the suite (each test uses
   * partners and keys of its own), and must not hold events of another run's partners.
   */
  readonly makeStore: () => Promise<EventStore>;
}

/**
 * A valid event for partner `partnerId` with a fresh idempotency key; `rawBody` is the JSON whose
 * `data` is `data`, as the core stores it.
 */
export function newEvent(overrides: Partial<NewEvent> = {}): NewEvent {
  const eventType = overrides.eventType ?? "partner.user.created";
  const occurredAt = overrides.occurredAt ?? "2026-11-20T10:15:00Z";
  const data = overrides.data ?? { user_id: `u_${uniqueTag()}` };
  return {
    partnerId: "p1",
    environment: "sandbox",
    idempotencyKey: `k-${uniqueTag()}${uniqueTag()}`,
    fingerprint: "a".repeat(64),
    eventType,
    occurredAt,
    data,
    rawBody: JSON.stringify({ event_type: eventType, occurred_at: occurredAt, data }),
    receivedAt: 1_763_633_700_123,
    ...overrides,
  };
}

export function runEventStoreSuite(options: EventStoreSuiteOptions): void {
  const { describe, test, makeStore } = options;
  /** A partner id no other test (or run) uses, so tests may share one backend. */
  const partner = () => `p-${uniqueTag()}`;

  describe(`EventStore conformance: ${options.name}`, () => {
    test("a new key is created with a positive safe-integer id; the same key and fingerprint is a duplicate of it", () =>
      using(makeStore(), async (store) => {
        const e = newEvent({ partnerId: partner() });
        const first = await store.append(e);
        assertTrue(first.status === "created", `expected created, got ${first.status}`);
        assertTrue(Number.isSafeInteger(first.event.id) && first.event.id > 0, `bad id ${first.event.id}`);
        const again = await store.append({ ...e, receivedAt: e.receivedAt + 5000 });
        assertTrue(again.status === "duplicate", `expected duplicate, got ${again.status}`);
        assertEqual(again.event.id, first.event.id, "a duplicate returns the original id");
        assertEqual(again.event.receivedAt, e.receivedAt, "a duplicate returns the original event");
        assertEqual((await store.find(e.partnerId, "sandbox", e.idempotencyKey))?.id, first.event.id);
      }));

    test("the same key with another fingerprint is a conflict and changes nothing", () =>
      using(makeStore(), async (store) => {
        const e = newEvent({ partnerId: partner() });
        await store.append(e);
        const other = await store.append({
          ...e,
          fingerprint: "b".repeat(64),
          data: { user_id: "someone-else" },
          rawBody: '{"x":1}',
        });
        assertTrue(other.status === "conflict", `expected conflict, got ${other.status}`);
        assertEqual(other.event.fingerprint, e.fingerprint, "a conflict returns the original event");
        const stored = await store.find(e.partnerId, "sandbox", e.idempotencyKey);
        assertEqual(stored?.rawBody, e.rawBody, "the original event is kept");
        assertEqual(stored?.fingerprint, e.fingerprint);
      }));

    test("the idempotency scope is (partner, environment, key)", () =>
      using(makeStore(), async (store) => {
        const key = `k-${uniqueTag()}`;
        const [p1, p2] = [partner(), partner()];
        const results = await Promise.all([
          store.append(newEvent({ partnerId: p1, idempotencyKey: key })),
          store.append(newEvent({ partnerId: p2, idempotencyKey: key })),
          store.append(newEvent({ partnerId: p1, idempotencyKey: key, environment: "production" })),
        ]);
        assertDeepEqual(
          results.map((r) => r.status),
          ["created", "created", "created"],
        );
        const ids = new Set(results.map((r) => ("event" in r ? r.event.id : 0)));
        assertEqual(ids.size, 3, "three scopes, three events");
        assertEqual(await store.find(p1, "sandbox", `${key}x`), undefined, "an unknown key finds nothing");
        assertEqual(await store.find(partner(), "sandbox", key), undefined, "another partner finds nothing");
      }));

    test("find returns exactly what was stored", () =>
      using(makeStore(), async (store) => {
        // As the core parses it: a "__proto__" key is an own property; \u0000 and a lone surrogate
        // are valid JSON escapes that some databases cannot hold in their JSON types.
        const data = JSON.parse(
          '{"user_id":"u_ünïcødé_😀","nested":{"list":[1,2.5,-3,true,null,"x"],"empty":{}},' +
            '"nul":"a\\u0000b","lone":"\\ud800","big":9007199254740991,"__proto__":{"p":1}}',
        ) as Record<string, unknown>;
        const e = newEvent({
          partnerId: partner(),
          environment: "production",
          idempotencyKey: `k!"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~${uniqueTag()}`,
          fingerprint: "0123456789abcdef".repeat(4),
          eventType: "partner.deposit.completed",
          occurredAt: "2026-11-20T23:59:60.123456+05:30",
          data,
          receivedAt: 1_763_633_700_999,
        });
        const created = await store.append(e);
        assertTrue(created.status === "created", `expected created, got ${created.status}`);
        const found = await store.find(e.partnerId, "production", e.idempotencyKey);
        assertDeepEqual(found, { ...e, id: created.event.id } satisfies StoredEvent, "stored event");
        assertTrue(
          found !== undefined && Object.hasOwn(found.data, "__proto__"),
          "a __proto__ key in data is kept as data",
        );
      }));

    test("an event whose data comes from its raw body (dataFromRawBody) reads back with that data, by find, list and a duplicate", () =>
      using(makeStore(), async (store) => {
        const rawBody =
          '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z",' +
          '"data":{"user_id":"u_ünï","n":[1,2.5,null],"lone":"\\ud800","__proto__":{"p":1}}}';
        const data = (JSON.parse(rawBody) as { data: Record<string, unknown> }).data;
        const e = newEvent({ partnerId: partner(), data, rawBody, dataFromRawBody: true });
        const created = await store.append(e);
        assertTrue(created.status === "created", `expected created, got ${created.status}`);
        const expected = { ...e, id: created.event.id };
        const { dataFromRawBody: _flag, ...withoutFlag } = expected;
        const same = (event: StoredEvent | undefined, what: string) => {
          assertTrue(event !== undefined, `${what}: found`);
          const { dataFromRawBody: _f, ...rest } = event!;
          assertDeepEqual(rest, withoutFlag, what);
          assertTrue(
            Object.hasOwn(event!.data, "__proto__"),
            `${what}: a __proto__ key in data is kept as data`,
          );
        };
        same(await store.find(e.partnerId, e.environment, e.idempotencyKey), "find");
        const listed = (await store.list(created.event.id - 1, 1))[0];
        same(listed?.id === created.event.id ? listed : undefined, "list");
        const again = await store.append({ ...e, receivedAt: e.receivedAt + 1 });
        assertTrue(again.status === "duplicate", `expected duplicate, got ${again.status}`);
        same(again.status === "duplicate" ? again.event : undefined, "duplicate");
      }));

    test("ids increase in acceptance order; list pages through them in order", () =>
      using(makeStore(), async (store) => {
        const p = partner();
        const ids: number[] = [];
        for (let i = 0; i < 25; i++) {
          const r = await store.append(newEvent({ partnerId: p, data: { n: i } }));
          assertTrue(r.status === "created", `expected created, got ${r.status}`);
          ids.push(r.event.id);
        }
        for (let i = 1; i < ids.length; i++) assertTrue(ids[i]! > ids[i - 1]!, `ids not increasing: ${ids}`);
        // Other tests may share the backend: keep this partner's events only.
        const pages: StoredEvent[] = [];
        let after = ids[0]! - 1;
        for (;;) {
          const page = await store.list(after, 10);
          assertTrue(page.length <= 10, `a page of ${page.length} for a limit of 10`);
          if (page.length === 0) break;
          for (let i = 1; i < page.length; i++)
            assertTrue(page[i]!.id > page[i - 1]!.id, "a page is in id order");
          assertTrue(page[0]!.id > after, "a page starts after the given id");
          pages.push(...page.filter((e) => e.partnerId === p));
          after = page[page.length - 1]!.id;
          if (after >= ids[ids.length - 1]!) break;
        }
        assertDeepEqual(
          pages.map((e) => e.id),
          ids,
        );
        assertDeepEqual(
          pages.map((e) => e.data),
          ids.map((_, n) => ({ n })),
        );
        assertDeepEqual(await store.list(ids[ids.length - 1]! + 1_000_000, 10), [], "past the end: nothing");
      }));

    test("200 concurrent submissions of one key yield exactly one event", () =>
      using(makeStore(), async (store) => {
        const e = newEvent({ partnerId: partner() });
        const results = await Promise.all(Array.from({ length: 200 }, () => store.append(e)));
        const created = results.filter((r) => r.status === "created");
        assertEqual(created.length, 1, "exactly one created");
        const ids = new Set(results.map((r) => ("event" in r ? r.event.id : -1)));
        assertEqual(ids.size, 1, "every answer names the one event");
        assertEqual(results.filter((r) => r.status === "duplicate").length, 199, "the rest are duplicates");
      }));

    test("concurrent submissions of one key with different bodies: one event, the rest conflicts or duplicates of it", () =>
      using(makeStore(), async (store) => {
        const p = partner();
        const key = `k-${uniqueTag()}`;
        const variants = Array.from({ length: 50 }, (_, i) =>
          newEvent({ partnerId: p, idempotencyKey: key, fingerprint: String(i % 5).repeat(64), data: { i } }),
        );
        const results = await Promise.all(variants.map((v) => store.append(v)));
        assertEqual(results.filter((r) => r.status === "created").length, 1, "exactly one created");
        const winner = (await store.find(p, "sandbox", key))!;
        for (const [i, r] of results.entries()) {
          if (r.status === "in_progress" || r.status === "full" || r.status === "created") continue;
          const same = variants[i]!.fingerprint === winner.fingerprint;
          assertEqual(r.status, same ? "duplicate" : "conflict", `submission ${i}`);
          if (r.status === "duplicate" || r.status === "conflict")
            assertEqual(r.event.id, winner.id, `submission ${i} names the stored event`);
        }
      }));
  });
}
