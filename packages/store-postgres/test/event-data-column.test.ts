/**
 * The `events.data` column (jsonb, for operators' queries; `find` and `list` read `data` from the
 * raw body). For an event whose `data` is `JSON.parse(rawBody).data` (`dataFromRawBody`, as the
 * core appends), PostgreSQL takes it from the raw body (migration 0010), so numbers are kept as the
 * partner wrote them; where jsonb may refuse the body (a `\u0000` or non-ASCII escape, a number
 * beyond `numeric`), the server's JSON text of `data` is stored as before, or null where jsonb
 * cannot hold it. Either way the event is stored: a body jsonb refuses never fails its append.
 */
import assert from "node:assert/strict";
import type { NewEvent } from "@partner-yield/core";
import { fcParams, newEvent } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import fc from "fast-check";
import type pg from "pg";
import { PostgresEventStore } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("data_column") : undefined;

let counter = 0;

/** An event of `rawBody`, its `data` parsed from it as the core does. */
function fromBody(rawBody: string, dataFromRawBody = true): NewEvent {
  const data = (JSON.parse(rawBody) as { data: Record<string, unknown> }).data;
  return newEvent({ idempotencyKey: `data-column-${counter++}`, data, rawBody, dataFromRawBody });
}

const body = (data: string) =>
  `{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":${data}}`;

/** The stored column as JSON text (jsonb's own output), or null. */
async function column(store: PostgresEventStore, event: NewEvent): Promise<string | null> {
  const appended = await store.append(event);
  assert.equal(appended.status, "created", event.rawBody.slice(0, 120));
  const { rows } = await db!.pool.query<{ data: string | null }>(
    "select data::text as data from events where partner_id = $1 and environment = $2 and idempotency_key = $3",
    [event.partnerId, event.environment, event.idempotencyKey],
  );
  return rows[0]!.data;
}

/** What jsonb makes of `text`, read back as text. */
async function asJsonb(text: string): Promise<string> {
  const { rows } = await db!.pool.query<{ data: string }>("select $1::jsonb::text as data", [text]);
  return rows[0]!.data;
}

describe("events.data", () => {
  test("from the raw body: numbers as the partner wrote them, not through a double", async () => {
    const store = new PostgresEventStore(db!.pool);
    const data = `{"amount":1.10,"units":12345678901234567891,"tiny":1e-999,"wide":1${"0".repeat(400)},"name":"ünï 😀"}`;
    assert.equal(await column(store, fromBody(body(data))), await asJsonb(data));
    // The same body without the flag: the server's JSON text of the parsed data, as before.
    assert.equal(
      await column(store, fromBody(body(data), false)),
      await asJsonb(JSON.stringify(JSON.parse(data))),
    );
    assert.notEqual(await asJsonb(data), await asJsonb(JSON.stringify(JSON.parse(data))));
  });

  test("a body jsonb may refuse is stored, with the server's JSON text of data or null", async () => {
    const store = new PostgresEventStore(db!.pool);
    const cases: [string, string | null][] = [
      ['{"nul":"a\\u0000b"}', null],
      ['{"lone":"\\ud800"}', null],
      ['{"pair":"\\ud83d\\ude00","e":"\\u00e9"}', '{"e": "é", "pair": "😀"}'],
      ['{"huge":1e1000}', '{"huge": null}'],
      ['{"exp":0E-1000}', '{"exp": 0}'],
      // A thousand digits: past a double, so null in the server's JSON text.
      [`{"long":${"9".repeat(1000)}}`, '{"long": null}'],
      [`{"long":0.${"1".repeat(1000)}}`, '{"long": 0.1111111111111111}'],
    ];
    for (const [data, expected] of cases) {
      const stored = await column(store, fromBody(body(data)));
      assert.equal(stored, expected === null ? null : await asJsonb(expected), data.slice(0, 60));
    }
    // All of them with one taken from its body, appended together: one statement, nothing refused.
    let inserts = 0;
    const counting = new PostgresEventStore({
      query: (config: { text: string }) => {
        if (config.text.includes("partner_yield_append_events(")) inserts++;
        return db!.pool.query(config);
      },
    } as unknown as pg.Pool);
    const events = [...cases.map(([data]) => fromBody(body(data))), fromBody(body('{"amount":1.10}'))];
    const columns = await Promise.all(events.map((event) => column(counting, event)));
    assert.equal(inserts, 1, "one statement for the batch, none again one by one");
    for (const [i, [data, expected]] of cases.entries())
      assert.equal(columns[i], expected === null ? null : await asJsonb(expected), data.slice(0, 60));
    assert.equal(columns.at(-1), '{"amount": 1.10}');
  });

  test("taken from the body or not, the column is what the server's JSON text would make it", async () => {
    const store = new PostgresEventStore(db!.pool);
    // JSON.stringify writes numbers as doubles print, so both paths see the same text.
    const value = fc.oneof(
      fc.string({ unit: "binary", maxLength: 12 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const data = fc.dictionary(
      fc.string({ unit: "binary", maxLength: 8 }),
      fc.oneof(value, fc.array(value, { maxLength: 3 })),
      {
        maxKeys: 5,
      },
    );
    await fc.assert(
      fc.asyncProperty(data, fc.constantFrom("", " ", "\n  "), async (d, space) => {
        const text = JSON.stringify(d, null, space);
        const raw = `{"event_type":"partner.user.created",${space}"occurred_at":"2026-11-20T10:15:00Z","data":${text}}`;
        const event = fromBody(raw);
        const unstorable = holdsUnstorable(d);
        const stored = await column(store, event);
        if (stored === null) {
          assert.ok(unstorable, `null only where jsonb cannot hold the data: ${text}`);
        } else {
          assert.equal(stored, await asJsonb(JSON.stringify(d)), text);
        }
      }),
      // A round trip to PostgreSQL each: fewer runs than the default unless FC_NUM_RUNS asks.
      { ...fcParams(process.env), numRuns: Number(process.env["FC_NUM_RUNS"] ?? 60) },
    );
  });
});

/** Whether a key or string in `value` holds a NUL or a lone surrogate (what jsonb cannot hold). */
function holdsUnstorable(value: unknown): boolean {
  const bad = (text: string) =>
    /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
  if (typeof value === "string") return bad(value);
  if (Array.isArray(value)) return value.some(holdsUnstorable);
  if (typeof value === "object" && value !== null)
    return Object.entries(value).some(([key, v]) => bad(key) || holdsUnstorable(v));
  return false;
}
