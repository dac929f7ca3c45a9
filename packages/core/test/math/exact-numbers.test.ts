import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { findInexactNumber, isExactJsonNumber } from "../../src/math/exact-numbers.js";
import { fcParams } from "../../src/testing/index.js";

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

/** The scan as first written: one character at a time through strings. */
function referenceScan(json: string): string | undefined {
  let i = 0;
  while (i < json.length) {
    const c = json[i]!;
    if (c === '"') {
      i++;
      while (i < json.length) {
        const d = json[i]!;
        if (d === "\\") i += 2;
        else {
          i++;
          if (d === '"') break;
        }
      }
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      const start = i++;
      while (i < json.length && /[0-9.eE+-]/.test(json[i]!)) i++;
      const token = json.slice(start, i);
      if (!isExactJsonNumber(token)) return token;
    } else {
      i++;
    }
  }
  return undefined;
}

test("property: findInexactNumber finds what a character-by-character scan finds (strings full of quotes and backslashes)", () => {
  const tricky = fc.string({ unit: fc.constantFrom('"', "\\", "1", "e", "x", "-", "9"), maxLength: 12 });
  const token = fc.oneof(
    tricky.map((t) => JSON.stringify(t)),
    fc.constantFrom("1", "-0.5", "12345678901234567891", "1e400", "0.1000000000000000055", "true", "null"),
  );
  fc.assert(
    fc.property(fc.array(token, { maxLength: 8 }), (tokens) => {
      const json = `[${tokens.join(",")}]`;
      assert.equal(findInexactNumber(json), referenceScan(json));
    }),
    fcParams(process.env),
  );
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
    fcParams(process.env),
  );
});
