/**
 * The event insert's binary array parameters (binary-array.ts) against PostgreSQL itself: the
 * bytes are those of PostgreSQL's own `array_send`, and every value reads back as the driver's
 * text parameter would have stored it (a lone surrogate as U+FFFD, a NUL refused as data).
 */
import assert from "node:assert/strict";
import { fcParams } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import fc from "fast-check";
import { boolArray, textArray, timestamptzArray } from "../src/binary-array.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("binary_array", { migrated: false }) : undefined;

const SAMPLE = ["", "a", 'quote " and \\ backslash, {braces}', "é ü ß", "😀 outside the BMP", "NULL"];

describe("binary text[] parameters", () => {
  test("are byte for byte what array_send writes for the same array", async () => {
    for (const values of [SAMPLE, [null], ["x", null, ""]]) {
      const { rows } = await db!.pool.query<{ bytes: Buffer }>("select array_send($1::text[]) as bytes", [
        textArray(values),
      ]);
      const expected = await db!.pool.query<{ bytes: Buffer }>("select array_send($1::text[]) as bytes", [
        values,
      ]);
      assert.deepEqual(rows[0]!.bytes, expected.rows[0]!.bytes, JSON.stringify(values));
    }
    // An empty array is sent with one dimension of length 0; PostgreSQL keeps it as '{}'.
    const { rows: back } = await db!.pool.query<{ n: number }>("select cardinality($1::text[]) as n", [
      textArray([]),
    ]);
    assert.equal(back[0]!.n, 0);
  });

  test("any strings read back as the driver's text parameters store them", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(fc.string({ unit: "binary", maxLength: 40 }), { nil: null }), { maxLength: 8 }),
        async (values) => {
          const clean = values.map((v) => (v === null ? null : v.replaceAll("\u0000", "")));
          const { rows } = await db!.pool.query<{ binary: (string | null)[]; text: (string | null)[] }>(
            "select $1::text[] as binary, $2::text[] as text",
            [textArray(clean), clean],
          );
          assert.deepEqual(rows[0]!.binary, rows[0]!.text);
        },
      ),
      // A round trip to PostgreSQL each: fewer runs than the default unless FC_NUM_RUNS asks.
      { ...fcParams(process.env), numRuns: Number(process.env["FC_NUM_RUNS"] ?? 60) },
    );
  });

  test("a lone surrogate is stored as U+FFFD, and a 1 MiB element whole", async () => {
    const long = "x".repeat(1024 * 1024);
    const { rows } = await db!.pool.query<{ values: string[] }>("select $1::text[] as values", [
      textArray(["a\uD800b", "\uDC00", long]),
    ]);
    assert.deepEqual(rows[0]!.values, ["a\uFFFDb", "\uFFFD", long]);
  });

  test("a NUL character is refused as data (SQLSTATE 22021), as a text parameter is", async () => {
    await assert.rejects(db!.pool.query("select $1::text[]", [textArray(["a\u0000b"])]), { code: "22021" });
    await assert.rejects(db!.pool.query("select $1::text[]", [["a\u0000b"]]), { code: "22021" });
  });
});

describe("binary timestamptz[] parameters", () => {
  test("are byte for byte what array_send writes, and read back to the millisecond", async () => {
    const times = [
      0,
      946_684_800_000,
      946_684_799_999,
      Date.UTC(2026, 10, 28, 9, 58, 1, 123),
      -62_135_596_800_000,
    ];
    const { rows } = await db!.pool.query<{ bytes: Buffer; back: Date[] }>(
      "select array_send($1::timestamptz[]) as bytes, $1::timestamptz[] as back",
      [timestamptzArray(times)],
    );
    const expected = await db!.pool.query<{ bytes: Buffer }>(
      "select array_send($1::timestamptz[]) as bytes",
      [times.map((t) => new Date(t).toISOString())],
    );
    assert.deepEqual(rows[0]!.bytes, expected.rows[0]!.bytes);
    assert.deepEqual(
      rows[0]!.back.map((d) => d.getTime()),
      times,
    );
  });

  test("a fraction of a millisecond is dropped as new Date drops it; an invalid time throws", async () => {
    const { rows } = await db!.pool.query<{ back: Date[] }>("select $1::timestamptz[] as back", [
      timestamptzArray([1.9, -1.5]),
    ]);
    assert.deepEqual(
      rows[0]!.back.map((d) => d.getTime()),
      [1, -1],
    );
    assert.throws(() => timestamptzArray([Number.NaN]), RangeError);
    assert.throws(() => timestamptzArray([8.64e15 + 1]), RangeError);
  });
});

describe("binary boolean[] parameters", () => {
  test("are byte for byte what array_send writes, and read back", async () => {
    for (const values of [[true, false, true], [false], []]) {
      const { rows } = await db!.pool.query<{ bytes: Buffer; back: boolean[] }>(
        "select array_send($1::boolean[]) as bytes, $1::boolean[] as back",
        [boolArray(values)],
      );
      const expected = await db!.pool.query<{ bytes: Buffer }>("select array_send($1::boolean[]) as bytes", [
        values,
      ]);
      assert.deepEqual(rows[0]!.back, values);
      if (values.length > 0)
        assert.deepEqual(rows[0]!.bytes, expected.rows[0]!.bytes, JSON.stringify(values));
    }
  });
});
