/**
 * `StringRecords`, where the in-memory event store keeps its events' strings: every string reads
 * back exactly (ASCII, other text, lone surrogates, the empty string), across chunk boundaries and
 * in records larger than a chunk.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { StringRecords } from "../../src/stores/string-records.js";
import { fcParams } from "../../src/testing/index.js";

/** Any UTF-16 code unit, lone surrogates included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u));
const field = fc.oneof(
  fc.string({ unit: "grapheme-ascii", maxLength: 40 }),
  fc.string({ unit: anyUnit, maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  // Long enough that a few of them fill the first chunk (64 KiB) and the next.
  fc
    .tuple(fc.string({ unit: anyUnit, maxLength: 4 }), fc.integer({ min: 1_000, max: 30_000 }))
    .map(([s, n]) => `${s}${"x".repeat(n)}${s}`),
);

test("every field of every record reads back exactly as appended", () => {
  fc.assert(
    fc.property(fc.array(fc.array(field, { minLength: 3, maxLength: 3 }), { maxLength: 60 }), (records) => {
      const strings = new StringRecords(3);
      for (const [i, fields] of records.entries()) assert.equal(strings.append(fields), i);
      assert.equal(strings.count, records.length);
      for (const [i, fields] of records.entries()) {
        for (const [f, text] of fields.entries())
          assert.equal(strings.field(i, f), text, `record ${i} field ${f}`);
      }
    }),
    fcParams(process.env),
  );
});

test("a string takes one byte a code unit when ASCII and two otherwise, never more", () => {
  const units = 100_000;
  const sizes = (text: string) => {
    const strings = new StringRecords(1);
    strings.append([text]); // a chunk of its own, sized for two bytes a unit
    const first = strings.reservedBytes;
    strings.append([text.slice(4)]); // with its 4-byte header, as long as the first record's text
    assert.equal(strings.field(0, 0), text);
    assert.equal(strings.field(1, 0), text.slice(4));
    return { first, second: strings.reservedBytes };
  };
  for (const text of ["a".repeat(units), "é".repeat(units), "\ud800".repeat(units), "😀".repeat(units / 2)]) {
    const { first } = sizes(text);
    assert.ok(first <= 2 * units + 4 + 2 * 1024, `${first} bytes reserved for ${units} units`);
  }
  // An ASCII record takes half its chunk: a second one fits in the rest; other text does not.
  const ascii = sizes("a".repeat(units));
  assert.equal(ascii.second, ascii.first);
  const other = sizes("é".repeat(units));
  assert.ok(other.second > other.first);
});

test("a record larger than the largest chunk gets a chunk of its own, and later records follow it", () => {
  const strings = new StringRecords(2);
  const big = `${"z".repeat(9 * 1024 * 1024)}\u00ff`;
  strings.append(["small", "x"]);
  strings.append([big, "after"]);
  strings.append(["tail", "end"]);
  assert.equal(strings.field(1, 0), big);
  assert.deepEqual(
    [strings.field(0, 0), strings.field(0, 1), strings.field(1, 1), strings.field(2, 0), strings.field(2, 1)],
    ["small", "x", "after", "tail", "end"],
  );
});

test("a wrong field count or an unknown record or field is a RangeError", () => {
  const strings = new StringRecords(2);
  assert.throws(() => strings.append(["one"]), /a record has 2 fields, not 1/);
  strings.append(["a", "b"]);
  assert.throws(() => strings.field(1, 0), RangeError);
  assert.throws(() => strings.field(-1, 0), RangeError);
  assert.throws(() => strings.field(0, 2), RangeError);
  assert.throws(() => strings.field(0.5, 0), RangeError);
  assert.equal(strings.count, 1);
});

test("equals tells whether a field is a given string, as comparing the field read back would", () => {
  fc.assert(
    fc.property(
      fc.array(field, { minLength: 1, maxLength: 8 }),
      fc.array(field, { maxLength: 8 }),
      (stored, probes) => {
        const strings = new StringRecords(1);
        for (const text of stored) strings.append([text]);
        stored.forEach((text, i) => {
          assert.ok(strings.equals(i, 0, text));
          for (const probe of [...probes, `${text}x`, text.slice(1), "", "é", "\ud800"]) {
            assert.equal(strings.equals(i, 0, probe), probe === text, JSON.stringify(probe));
          }
        });
      },
    ),
    fcParams(process.env),
  );
});
