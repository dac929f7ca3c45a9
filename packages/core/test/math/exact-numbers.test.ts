import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { findInexactNumber, isExactJsonNumber } from "../../src/math/exact-numbers.js";
import { fcParams } from "../fc-config.js";

test("exact and inexact number tokens", () => {
  for (const t of [
    "0",
    "-0",
    "0.0",
    "1",
    "-1",
    "0.1",
    "1e20",
    "1E-5",
    "9007199254740991",
    "-9007199254740991",
    "123456789012345",
    "1.00000000000000000000",
    "100000000000000000000000",
  ]) {
    assert.equal(isExactJsonNumber(t), true, t);
  }
  for (const t of [
    "9007199254740993",
    "12345678901234567890",
    "0.1234567890123456",
    "1e400",
    "-1e400",
    "1e-320",
    "1.5e",
    "abc",
  ]) {
    assert.equal(isExactJsonNumber(t), false, t);
  }
});

test("findInexactNumber skips strings, escapes included", () => {
  assert.equal(findInexactNumber('{"a":"12345678901234567890","b\\"":"\\"1e400"}'), undefined);
  assert.equal(findInexactNumber('{"a":[1,2,{"b":12345678901234567891}]}'), "12345678901234567891");
  assert.equal(findInexactNumber("[true,false,null,-0.5e-3]"), undefined);
});

test("property: two different exact numbers never parse to the same double", () => {
  // Decimals with at most 15 significant digits: distinct values stay distinct after parsing.
  const decimal = fc
    .tuple(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.integer({ min: -300, max: 300 }))
    .map(([m, e]) => `${m}e${e}`);
  fc.assert(
    fc.property(decimal, decimal, (a, b) => {
      if (!isExactJsonNumber(a) || !isExactJsonNumber(b)) return true;
      const [ma, ea] = a.split("e").map(BigInt) as [bigint, bigint];
      const [mb, eb] = b.split("e").map(BigInt) as [bigint, bigint];
      // biome-ignore lint/complexity/useMathMinMax: Math.min does not take bigints
      const e = ea < eb ? ea : eb;
      const same = ma * 10n ** (ea - e) === mb * 10n ** (eb - e);
      return same === (Number(a) === Number(b));
    }),
    fcParams(),
  );
});
