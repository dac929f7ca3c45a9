import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import fc from "fast-check";
import { API_KEY_PREFIXES, generateApiKey, hashApiKey, parseApiKey } from "../../src/auth/api-key.js";
import { BASE62_ALPHABET, encodeBase62 } from "../../src/auth/base62.js";
import { crc32 } from "../../src/auth/crc32.js";
import type { Environment } from "../../src/auth/environment.js";
import { fcParams } from "../../src/testing/index.js";

const encoder = new TextEncoder();
const ENVIRONMENTS: readonly Environment[] = ["sandbox", "production"];
const KEY_SHAPE = /^ypk_(test|live)_[0-9A-Za-z]{38}$/;

/** A deterministic random source for properties: bytes derived from a fast-check seed. */
function seededRandom(seed: number): (n: number) => Uint8Array {
  let state = seed >>> 0 || 1;
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      out[i] = state & 0xff;
    }
    return out;
  };
}

describe("API keys (CONTRACT §4)", () => {
  test("generated keys have their environment's prefix, 47 characters, and parse", () => {
    for (const environment of ENVIRONMENTS) {
      for (let i = 0; i < 50; i++) {
        const key = generateApiKey(environment);
        assert.ok(key.startsWith(API_KEY_PREFIXES[environment]));
        assert.equal(key.length, 9 + 32 + 6);
        assert.match(key, KEY_SHAPE);
        assert.deepEqual(parseApiKey(key), { ok: true, value: environment });
      }
    }
    assert.equal(API_KEY_PREFIXES.sandbox, "ypk_test_");
    assert.equal(API_KEY_PREFIXES.production, "ypk_live_");
  });

  test("the checksum is the base62 CRC-32 of the prefix and random part", () => {
    const key = generateApiKey("sandbox");
    const body = key.slice(0, 41);
    assert.equal(key.slice(41), encodeBase62(BigInt(crc32(encoder.encode(body))), 6));
  });

  test("two generated keys differ", () => {
    assert.notEqual(generateApiKey("production"), generateApiKey("production"));
  });

  test("malformed keys are refused", () => {
    const key = generateApiKey("production");
    const refused = [
      "",
      key.slice(0, -1),
      key + "0",
      "ypk_prod_" + key.slice(9),
      "YPK_LIVE_" + key.slice(9),
      key.slice(0, 20) + "-" + key.slice(21),
      key.slice(0, 46) + (key.endsWith("0") ? "1" : "0"),
      " " + key.slice(1),
    ];
    for (const bad of refused) assert.equal(parseApiKey(bad).ok, false, bad);
  });

  test("each refusal names the rule that failed", () => {
    const key = generateApiKey("production");
    const code = (candidate: string) => {
      const result = parseApiKey(candidate);
      return result.ok ? "accepted" : result.code;
    };
    assert.equal(code(key.slice(0, -1)), "wrong_length");
    assert.equal(code("ypk_prod_" + key.slice(9)), "unknown_prefix");
    assert.equal(code(key.slice(0, 20) + "-" + key.slice(21)), "not_base62");
    assert.equal(code(key.slice(0, 46) + (key.endsWith("0") ? "1" : "0")), "bad_checksum");
  });

  test("property: a one-character typo is caught by the checksum", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ENVIRONMENTS),
        fc.integer(),
        fc.integer({ min: 9, max: 46 }),
        fc.constantFrom(...BASE62_ALPHABET),
        (environment, seed, index, replacement) => {
          const key = generateApiKey(environment, seededRandom(seed));
          fc.pre(key.charAt(index) !== replacement);
          const typo = key.slice(0, index) + replacement + key.slice(index + 1);
          assert.equal(parseApiKey(typo).ok ? "accepted" : "refused", "refused");
        },
      ),
      fcParams(process.env),
    );
  });

  test("property: two adjacent characters swapped are caught by the checksum", () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 9, max: 45 }), (seed, index) => {
        const key = generateApiKey("sandbox", seededRandom(seed));
        fc.pre(key.charAt(index) !== key.charAt(index + 1));
        const typo = key.slice(0, index) + key.charAt(index + 1) + key.charAt(index) + key.slice(index + 2);
        assert.equal(parseApiKey(typo).ok ? "accepted" : "refused", "refused");
      }),
      fcParams(process.env),
    );
  });

  test("hashApiKey is the lowercase hex SHA-256 of the key (matches node:crypto)", () => {
    const key = generateApiKey("sandbox");
    assert.equal(hashApiKey(key), createHash("sha256").update(key, "utf8").digest("hex"));
    assert.equal(hashApiKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert.equal(hashApiKey("é"), createHash("sha256").update("é", "utf8").digest("hex"));
  });
});
