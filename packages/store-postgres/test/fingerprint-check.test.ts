/**
 * Migration 0009's fingerprint check accepts exactly what schema 1's did (`^[0-9a-f]{64}$`): the
 * two agree on any string, near misses included, and the event log refuses a row the rule refuses.
 */
import assert from "node:assert/strict";
import { fcParams } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import fc from "fast-check";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("fingerprint_check") : undefined;

/** The check as the database holds it now. */
async function checkDefinition(): Promise<string> {
  const { rows } = await db!.pool.query<{ definition: string }>(
    `select pg_get_constraintdef(oid) as definition from pg_constraint
     where conrelid = 'events'::regclass and conname = 'events_fingerprint_check'`,
  );
  assert.equal(rows.length, 1);
  return rows[0]!.definition;
}

const HEX = "0123456789abcdef";
/** Strings near the rule: 62-66 characters of mostly hex digits, now and then another character. */
const nearFingerprint = fc
  .tuple(
    fc.integer({ min: 62, max: 66 }),
    fc.array(fc.constantFrom(...HEX), { minLength: 66, maxLength: 66 }),
    fc.option(fc.tuple(fc.nat(65), fc.constantFrom("A", "g", "é", "\n", " ", "-", "😀")), { freq: 2 }),
  )
  .map(([length, digits, odd]) => {
    const chars = digits.slice(0, length);
    if (odd !== null) chars[odd[0] % length] = odd[1];
    return chars.join("");
  });

describe("the events.fingerprint check (migration 0009)", () => {
  test("is the length and one-state pattern form", async () => {
    const definition = await checkDefinition();
    assert.match(definition, /octet_length\(fingerprint\) = 64/);
    assert.match(definition, /\^\[0-9a-f\]\*\$/);
  });

  test("agrees with schema 1's ^[0-9a-f]{64}$ on any string", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(nearFingerprint, fc.string({ maxLength: 70 })), async (value) => {
        const clean = value.replaceAll("\u0000", "");
        const { rows } = await db!.pool.query<{ old: boolean; now: boolean }>(
          `select $1 ~ '^[0-9a-f]{64}$' as old, (octet_length($1) = 64 and $1 ~ '^[0-9a-f]*$') as now`,
          [clean],
        );
        assert.equal(rows[0]!.now, rows[0]!.old, JSON.stringify(clean));
      }),
      fcParams(process.env),
    );
  });

  test("the event log refuses a row whose fingerprint breaks the rule, and takes one that keeps it", async () => {
    const insert = (fingerprint: string) =>
      db!.pool.query(
        `insert into events (partner_id, environment, idempotency_key, fingerprint, event_type,
           occurred_at, raw_body, received_at)
         values ('p', 'sandbox', md5(random()::text), $1, 't', '2026-11-28T00:00:00Z', '{}', now())`,
        [fingerprint],
      );
    for (const bad of ["A".repeat(64), "a".repeat(63), "a".repeat(65), `${"a".repeat(62)}é`]) {
      await assert.rejects(insert(bad), { code: "23514", constraint: "events_fingerprint_check" }, bad);
    }
    await insert("0123456789abcdef".repeat(4));
  });
});
