/**
 * The `events.data` column (jsonb, for operators' and consumers' queries). When the core parsed an
 * event's `data` from its raw body (`dataFromRawBody`), PostgreSQL takes the column from that body
 * (`raw_body::jsonb -> 'data'`) and the data is not sent a second time; a body jsonb cannot take
 * (a \u0000 or surrogate escape, or one it refuses for any other reason) falls back to the data as
 * the core parsed it, or null where jsonb cannot hold it, as before. Every append is still answered
 * as it would be alone, whether it went with the others or on its own.
 */
import assert from "node:assert/strict";
import type { NewEvent } from "@partner-yield/core";
import { newEvent, uniqueTag } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import type pg from "pg";
import { PostgresEventStore } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("data_column") : undefined;

/** A store over the file's pool that records the values of every insert it sends. */
function recordingStore(): { store: PostgresEventStore; inserts: unknown[][] } {
  const inserts: unknown[][] = [];
  const pool = {
    query: (text: string | pg.QueryConfig, values?: unknown[]) => {
      if (typeof text !== "string" && text.text.includes("insert into events"))
        inserts.push(text.values ?? []);
      return typeof text === "string" ? db!.pool.query(text, values) : db!.pool.query(text);
    },
    connect: () => db!.pool.connect(),
  } as unknown as pg.Pool;
  return { store: new PostgresEventStore(pool), inserts };
}

/** An event as the core makes it: `data` parsed from `rawBody`, flagged `dataFromRawBody`. */
function parsedEvent(partnerId: string, rawBody: string): NewEvent {
  const data = (JSON.parse(rawBody) as { data: Record<string, unknown> }).data;
  return newEvent({ partnerId, data, rawBody, dataFromRawBody: true });
}

function body(dataJson: string): string {
  return `{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":${dataJson}}`;
}

/** The `data` column of the event, as JSON text (null: SQL null). */
async function column(event: NewEvent): Promise<string | null> {
  const { rows } = await db!.pool.query<{ data: string | null }>(
    "select data::text as data from events where partner_id = $1 and environment = $2 and idempotency_key = $3",
    [event.partnerId, event.environment, event.idempotencyKey],
  );
  assert.equal(rows.length, 1, "one row");
  return rows[0]!.data;
}

describe("PostgresEventStore: the data column", () => {
  test("is taken from the raw body, and the data is not sent again", async () => {
    const { store, inserts } = recordingStore();
    const p = `p_${uniqueTag()}`;
    const e = parsedEvent(
      p,
      body('{"user_id":"u_ünï 😀","n":[1,2.5,null],"o":{"k":"v"},"__proto__":{"p":1}}'),
    );
    const r = await store.append(e);
    assert.equal(r.status, "created");
    assert.equal(inserts.length, 1);
    const [values] = inserts;
    assert.deepEqual(values![6], [null], "no JSON text of data travels");
    assert.deepEqual(values![11], [true], "the statement is told to read data from the body");
    const text = await column(e);
    assert.notEqual(text, null);
    assert.deepEqual(
      JSON.parse(text!),
      JSON.parse('{"user_id":"u_ünï 😀","n":[1,2.5,null],"o":{"k":"v"},"__proto__":{"p":1}}'),
    );
    // The stored event reads back exactly as appended (the body is the source of truth).
    const found = await store.find(p, "sandbox", e.idempotencyKey);
    assert.ok(found !== undefined && Object.hasOwn(found.data, "__proto__"));
    assert.deepEqual(
      { ...found, dataFromRawBody: true },
      { ...e, id: r.status === "created" ? r.event.id : 0 },
    );
    await store.close();
  });

  test("keeps numbers as the body wrote them", async () => {
    const { store } = recordingStore();
    const e = parsedEvent(`p_${uniqueTag()}`, body('{"amount":1.50,"big":9007199254740991}'));
    assert.equal((await store.append(e)).status, "created");
    const { rows } = await db!.pool.query<{ amount: string; big: string }>(
      "select data->>'amount' as amount, data->>'big' as big from events where idempotency_key = $1",
      [e.idempotencyKey],
    );
    assert.deepEqual(rows[0], { amount: "1.50", big: "9007199254740991" });
    await store.close();
  });

  test("a body jsonb cannot take sends the data as parsed, or null, in the same batch as the others", async () => {
    const { store, inserts } = recordingStore();
    const p = `p_${uniqueTag()}`;
    const plain = parsedEvent(p, body('{"a":1}'));
    const nul = parsedEvent(p, body('{"s":"a\\u0000b"}'));
    const lone = parsedEvent(p, body('{"s":"\\ud800"}'));
    const pair = parsedEvent(p, body('{"s":"\\ud83d\\ude00"}'));
    const notFlagged = newEvent({ partnerId: p, data: { b: 2 } });
    const results = await Promise.all([plain, nul, lone, pair, notFlagged].map((e) => store.append(e)));
    assert.deepEqual(
      results.map((r) => r.status),
      ["created", "created", "created", "created", "created"],
    );
    assert.equal(inserts.length, 1, "one statement for the five");
    // The statement's rows are in key order: read each event's flag by its key.
    const [values] = inserts;
    const flags = new Map((values![2] as string[]).map((key, i) => [key, (values![11] as boolean[])[i]]));
    assert.deepEqual(
      [plain, nul, lone, pair, notFlagged].map((e) => flags.get(e.idempotencyKey)),
      [true, false, false, false, false],
    );
    assert.deepEqual(JSON.parse((await column(plain))!), { a: 1 });
    assert.equal(await column(nul), null, "jsonb cannot hold \\u0000");
    assert.equal(await column(lone), null, "jsonb cannot hold a lone surrogate");
    assert.deepEqual(JSON.parse((await column(pair))!), { s: "😀" });
    assert.deepEqual(JSON.parse((await column(notFlagged))!), { b: 2 });
    await store.close();
  });

  test("a body PostgreSQL refuses as JSON falls back to the data as parsed; the other appends are answered as alone", async () => {
    const { store, inserts } = recordingStore();
    const p = `p_${uniqueTag()}`;
    // A caller that flags data as parsed from a body that is not JSON at all: the database's
    // refusal must cost nothing but a second statement.
    const odd: NewEvent = {
      ...newEvent({ partnerId: p, data: { c: 3 } }),
      rawBody: "{not json",
      dataFromRawBody: true,
    };
    const fine = parsedEvent(p, body('{"d":4}'));
    const again = { ...fine, receivedAt: fine.receivedAt + 1 };
    const results = await Promise.all([odd, fine, again].map((e) => store.append(e)));
    assert.deepEqual(
      results.map((r) => r.status),
      ["created", "created", "duplicate"],
    );
    assert.ok(inserts.length >= 2, "the refused batch was sent again");
    assert.deepEqual(JSON.parse((await column(odd))!), { c: 3 });
    assert.deepEqual(JSON.parse((await column(fine))!), { d: 4 });
    const found = await store.find(p, "sandbox", odd.idempotencyKey);
    assert.equal(found?.rawBody, "{not json");
    assert.deepEqual(found?.data, { c: 3 });
    await store.close();
  });
});
