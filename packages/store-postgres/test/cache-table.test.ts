/**
 * `CacheTable` alone (no database): its bounds, answers of no such row kept apart from the found
 * ones, the generation that refuses a fill begun before an invalidation, and trust.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CacheTable, type CacheTrust } from "../src/cache-table.js";

const trusted = (): CacheTrust => ({ until: Number.MAX_SAFE_INTEGER });

describe("CacheTable", () => {
  test("never holds more than its bounds; the oldest entry leaves first", () => {
    const table = new CacheTable<number>("t", 3, 2, trusted());
    for (let i = 0; i < 10; i++) table.fill(`k${i}`, i, table.generation);
    for (let i = 0; i < 10; i++) table.fill(`a${i}`, null, table.generation);
    assert.deepEqual(table.size, { found: 3, absent: 2 });
    assert.deepEqual(
      ["k6", "k7", "k8", "k9"].map((k) => table.get(k)),
      [undefined, 7, 8, 9],
    );
    assert.deepEqual(
      ["a7", "a8", "a9"].map((k) => table.get(k)),
      [undefined, null, null],
    );
  });

  test("a flood of unknown keys does not push the known ones out", () => {
    const table = new CacheTable<string>("t", 100, 10, trusted());
    table.fill("known", "row", table.generation);
    for (let i = 0; i < 10_000; i++) table.fill(`unknown-${i}`, null, table.generation);
    assert.equal(table.get("known"), "row");
    assert.deepEqual(table.size, { found: 1, absent: 10 });
  });

  test("a fill begun before an invalidation (of any key) or a clear is not stored", () => {
    const table = new CacheTable<string>("t", 10, 10, trusted());
    const before = table.generation;
    table.invalidate("other");
    table.fill("k", "old row", before);
    assert.equal(table.get("k"), undefined);
    const again = table.generation;
    table.clear();
    table.fill("k", "old row", again);
    assert.equal(table.get("k"), undefined);
    table.fill("k", "row", table.generation);
    assert.equal(table.get("k"), "row");
    table.invalidate("k");
    assert.equal(table.get("k"), undefined);
  });

  test("an answer found replaces one of no such row, and the other way round", () => {
    const table = new CacheTable<string>("t", 10, 10, trusted());
    table.fill("k", null, table.generation);
    assert.equal(table.get("k"), null);
    table.fill("k", "row", table.generation);
    assert.equal(table.get("k"), "row");
    table.fill("k", null, table.generation);
    assert.equal(table.get("k"), null);
    assert.deepEqual(table.size, { found: 0, absent: 1 });
  });

  test("answers nothing and stores nothing while it is not trusted", () => {
    const trust: CacheTrust = { until: Number.MAX_SAFE_INTEGER };
    const table = new CacheTable<string>("t", 10, 10, trust);
    table.fill("k", "row", table.generation);
    trust.until = Date.now() - 1;
    assert.equal(table.get("k"), undefined, "a lapsed lease");
    table.fill("j", "row", table.generation);
    trust.until = Number.MAX_SAFE_INTEGER;
    assert.equal(table.get("j"), undefined, "not stored while distrusted");
    assert.equal(table.get("k"), "row");
  });

  test("refuses bounds that are not whole numbers >= 0", () => {
    assert.throws(() => new CacheTable("t", -1, 0, trusted()), RangeError);
    assert.throws(() => new CacheTable("t", 1.5, 0, trusted()), RangeError);
  });
});
