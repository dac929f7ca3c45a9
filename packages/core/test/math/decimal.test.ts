import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  CANONICAL_DECIMAL,
  formatUnits,
  isCanonicalDecimal,
  MAX_UINT256,
  parseAmount,
  parseDecimal,
} from "../../src/math/decimal.js";
import { fcParams } from "../../src/testing/index.js";

const FORMAT_REASON =
  "amount must be a plain decimal number like 1000.5 (no sign, exponent, spaces or separators)";

function refusal(input: string, decimals: number, symbol?: string): string {
  const result = parseAmount(input, decimals, symbol);
  assert.equal(result.ok, false, `${JSON.stringify(input)} should be refused`);
  return result.ok ? "" : result.reason;
}

function units(input: string, decimals: number): bigint {
  const result = parseAmount(input, decimals);
  assert.ok(result.ok, `${JSON.stringify(input)} should be accepted: ${result.ok ? "" : result.reason}`);
  return result.value;
}

describe("parseAmount (CONTRACT §3)", () => {
  test("refuses every malformed example of CONTRACT §3 with the format reason", () => {
    for (const input of [
      "1e3",
      "+1",
      "-1",
      ".5",
      "5.",
      " 5",
      "5 ",
      "0x10",
      "1,000",
      "NaN",
      "１",
      "1.5.0",
      "Infinity",
    ]) {
      assert.equal(refusal(input, 6), FORMAT_REASON, JSON.stringify(input));
    }
  });

  test("refuses the empty string", () => {
    assert.equal(refusal("", 6), "amount must not be empty");
  });

  test("refuses leading zeros", () => {
    assert.equal(refusal("01", 6), "amount must not have leading zeros");
    assert.equal(refusal("00.5", 6), "amount must not have leading zeros");
  });

  test("refuses zero however it is written", () => {
    for (const input of ["0", "0.0", "0.000000"]) {
      assert.equal(refusal(input, 6), "amount must be greater than zero", input);
    }
  });

  test("refuses too many fractional digits, naming both counts and the asset", () => {
    assert.equal(refusal("1.5000000", 6, "USDC"), "amount has 7 fractional digits; USDC allows at most 6");
    assert.equal(refusal("0.0000001", 6, "USDC"), "amount has 7 fractional digits; USDC allows at most 6");
    assert.equal(refusal("1.5", 0, "NFT"), "amount has 1 fractional digit; NFT allows no fractional digits");
    assert.equal(refusal("1.123", 2), "amount has 3 fractional digits; the asset allows at most 2");
  });

  test("accepts trailing fractional zeros within the asset's decimals", () => {
    assert.equal(units("1.50", 2), 150n);
    assert.equal(units("1.5", 2), 150n);
    assert.equal(units("1.500000", 6), 1_500_000n);
    assert.equal(units("0.5", 6), 500_000n);
    assert.equal(units("1000", 6), 1_000_000_000n);
    assert.equal(units("0.000001", 6), 1n);
  });

  test("accepts exactly 2^256 − 1 base units and refuses one more", () => {
    assert.equal(units(MAX_UINT256.toString(), 0), MAX_UINT256);
    assert.equal(units(formatUnits(MAX_UINT256, 18), 18), MAX_UINT256);
    assert.equal(
      refusal((MAX_UINT256 + 1n).toString(), 0),
      "amount exceeds the maximum of 2^256 − 1 base units",
    );
    assert.equal(
      refusal(formatUnits(MAX_UINT256 + 1n, 18), 18),
      "amount exceeds the maximum of 2^256 − 1 base units",
    );
  });

  test("refuses absurdly long input before looking at its characters", () => {
    assert.match(
      refusal("1".repeat(100_000), 6, "USDC"),
      /^amount is too long: 100000 characters, at most 85 for USDC$/,
    );
    assert.match(refusal(" ".repeat(1_000_000), 18), /too long/);
  });

  test("each refusal names its rule by a stable code, in the order the rules are checked", () => {
    const cases: [string, number, string][] = [
      ["", 6, "empty"],
      ["1".repeat(86), 6, "too_long"],
      ["1e3", 6, "not_plain_decimal"],
      ["01", 6, "leading_zeros"],
      ["1.1234567", 6, "too_many_decimals"],
      ["0.000", 6, "not_positive"],
      [(2n ** 256n).toString(), 0, "too_large"],
    ];
    for (const [input, decimals, code] of cases) {
      const result = parseAmount(input, decimals);
      assert.equal(result.ok ? "accepted" : result.code, code, JSON.stringify(input));
    }
  });

  test("rejects decimals that are not a uint8 as a programming error", () => {
    assert.throws(() => parseAmount("1", -1), RangeError);
    assert.throws(() => parseAmount("1", 1.5), RangeError);
    assert.throws(() => parseAmount("1", 256), RangeError);
  });
});

describe("formatUnits (CONTRACT §1)", () => {
  test("formats canonical decimals", () => {
    const cases: [bigint, number, string][] = [
      [0n, 6, "0"],
      [1n, 6, "0.000001"],
      [1_500_000n, 6, "1.5"],
      [1_000_000_000n, 6, "1000"],
      [150n, 2, "1.5"],
      [123n, 0, "123"],
      [10n ** 18n, 18, "1"],
      [52_300_000_000_000_000n, 18, "0.0523"],
    ];
    for (const [value, decimals, text] of cases) assert.equal(formatUnits(value, decimals), text);
  });

  test("formats negatives, never -0", () => {
    assert.equal(formatUnits(-5n, 2), "-0.05");
    assert.equal(formatUnits(-150n, 2), "-1.5");
    assert.equal(formatUnits(-20_000_000_000_000_000n, 18), "-0.02");
    assert.equal(formatUnits(-7n, 0), "-7");
    assert.equal(formatUnits(-0n, 6), "0");
  });
});

describe("parseDecimal", () => {
  test("parses plain decimals, canonical or not", () => {
    assert.deepEqual(parseDecimal("0.0523", 18), { ok: true, value: 52_300_000_000_000_000n });
    assert.deepEqual(parseDecimal("-1.5", 2), { ok: true, value: -150n });
    assert.deepEqual(parseDecimal("1.50", 2), { ok: true, value: 150n });
    assert.deepEqual(parseDecimal("007", 0), { ok: true, value: 7n });
    assert.deepEqual(parseDecimal("-0", 3), { ok: true, value: 0n });
  });

  test("refuses anything else, saying why, without throwing", () => {
    for (const text of ["", "1e3", "+1", ".5", "5.", " 1", "1,0", "NaN", "--1", "１"]) {
      const result = parseDecimal(text, 6);
      assert.equal(result.ok ? "accepted" : result.code, "not_plain_decimal", JSON.stringify(text));
    }
    const tooPrecise = parseDecimal("1.123", 2);
    assert.equal(tooPrecise.ok, false);
    assert.equal(tooPrecise.ok ? "" : tooPrecise.code, "too_many_decimals");
    assert.match(tooPrecise.ok ? "" : tooPrecise.reason, /has 3 fractional digits; at most 2 allowed/);
  });

  test("a decimals argument that is not a uint8 is a programming error", () => {
    assert.throws(() => parseDecimal("1", -1), RangeError);
  });
});

describe("isCanonicalDecimal (CONTRACT §1)", () => {
  test("accepts the canonical form only", () => {
    for (const text of ["0", "1000.5", "0.0523", "-0.02", "-7"]) assert.ok(isCanonicalDecimal(text), text);
    for (const text of ["-0", "1.50", "01", "1.", ".5", "+1", "1e3", "1.0", "-0.0", ""]) {
      assert.ok(!isCanonicalDecimal(text), text);
    }
    assert.ok(CANONICAL_DECIMAL.test("-0"), "the CONTRACT §1 regex alone admits -0");
  });
});

describe("properties", () => {
  const decimals = fc.integer({ min: 0, max: 36 });

  test("formatUnits output is always canonical", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }), decimals, (value, d) => {
        const text = formatUnits(value, d);
        assert.ok(CANONICAL_DECIMAL.test(text) && isCanonicalDecimal(text), text);
      }),
      fcParams(process.env),
    );
  });

  test("parseDecimal(formatUnits(x)) is the identity", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }), decimals, (value, d) => {
        assert.deepEqual(parseDecimal(formatUnits(value, d), d), { ok: true, value });
      }),
      fcParams(process.env),
    );
  });

  test("parseAmount(formatUnits(x)) is the identity for every valid amount", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: MAX_UINT256 }), decimals, (value, d) => {
        assert.deepEqual(parseAmount(formatUnits(value, d), d), { ok: true, value });
      }),
      fcParams(process.env),
    );
  });

  test("trailing fractional zeros within the decimals do not change the amount", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 30n }), decimals, fc.nat(36), (value, d, extra) => {
        const text = formatUnits(value, d);
        const fraction = text.includes(".") ? text.length - text.indexOf(".") - 1 : 0;
        const zeros = Math.min(extra, d - fraction);
        fc.pre(zeros > 0);
        const padded = (fraction === 0 ? text + "." : text) + "0".repeat(zeros);
        assert.deepEqual(parseAmount(padded, d), { ok: true, value });
      }),
      fcParams(process.env),
    );
  });

  test("parseAmount never throws and accepts only what the §3 pattern allows", () => {
    const pattern = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(..."0123456789.-+e ,x１") }), decimals, (text, d) => {
        const result = parseAmount(text, d);
        if (result.ok) assert.match(text, pattern);
      }),
      fcParams(process.env),
    );
  });
});
