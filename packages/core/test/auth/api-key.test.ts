import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  API_KEY_PREFIXES,
  type Environment,
  generateApiKey,
  generateSigningSecret,
  hashApiKey,
  isSigningSecret,
  parseApiKey,
} from "../../src/auth/api-key.js";
import { BASE62_ALPHABET, encodeBase62, isBase62, randomBase62 } from "../../src/auth/base62.js";
import { crc32 } from "../../src/auth/crc32.js";
import { fcParams } from "../fc-config.js";

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

describe("crc32", () => {
  test('the IEEE check value: crc32("123456789") = 0xCBF43926', () => {
    assert.equal(crc32(encoder.encode("123456789")), 0xcbf43926);
    assert.equal(crc32(new Uint8Array(0)), 0);
    assert.equal(crc32(encoder.encode("The quick brown fox jumps over the lazy dog")), 0x414fa339);
  });
});

describe("base62", () => {
  test("encodes fixed width, left-padded with 0", () => {
    assert.equal(encodeBase62(0n, 6), "000000");
    assert.equal(encodeBase62(61n, 2), "0z");
    assert.equal(encodeBase62(62n, 2), "10");
    assert.equal(encodeBase62(0xffffffffn, 6), "4gfFC3");
    assert.throws(() => encodeBase62(62n ** 6n, 6), RangeError);
    assert.throws(() => encodeBase62(-1n, 6), RangeError);
  });

  test("isBase62 accepts exactly the alphabet", () => {
    assert.ok(isBase62(BASE62_ALPHABET));
    for (const bad of ["-", "_", " ", "é", "０"]) assert.ok(!isBase62("ab" + bad), bad);
  });

  test("rejection sampling skips bytes ≥ 248", () => {
    const bytes = [255, 248, 0, 247, 61, 62];
    const random = (n: number) => Uint8Array.from({ length: n }, () => bytes.shift() ?? 1);
    assert.equal(randomBase62(4, random), "0zz0");
  });
});

describe("API keys (CONTRACT §4)", () => {
  test("generated keys have their environment's prefix, 47 characters, and parse", () => {
    for (const environment of ENVIRONMENTS) {
      for (let i = 0; i < 50; i++) {
        const key = generateApiKey(environment);
        assert.ok(key.startsWith(API_KEY_PREFIXES[environment]));
        assert.equal(key.length, 9 + 32 + 6);
        assert.match(key, KEY_SHAPE);
        assert.deepEqual(parseApiKey(key), { ok: true, environment });
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
    for (const bad of refused) assert.deepEqual(parseApiKey(bad), { ok: false }, bad);
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
          assert.deepEqual(parseApiKey(typo), { ok: false });
        },
      ),
      fcParams(),
    );
  });

  test("property: two adjacent characters swapped are caught by the checksum", () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 9, max: 45 }), (seed, index) => {
        const key = generateApiKey("sandbox", seededRandom(seed));
        fc.pre(key.charAt(index) !== key.charAt(index + 1));
        const typo = key.slice(0, index) + key.charAt(index + 1) + key.charAt(index) + key.slice(index + 2);
        assert.deepEqual(parseApiKey(typo), { ok: false });
      }),
      fcParams(),
    );
  });

  test("hashApiKey is the lowercase hex SHA-256 of the key (matches node:crypto)", () => {
    const key = generateApiKey("sandbox");
    assert.equal(hashApiKey(key), createHash("sha256").update(key, "utf8").digest("hex"));
    assert.equal(hashApiKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert.equal(hashApiKey("é"), createHash("sha256").update("é", "utf8").digest("hex"));
  });
});

describe("signing secrets (CONTRACT §4)", () => {
  test("generated secrets are whsec_ + 32 base64url characters, and differ", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const secret = generateSigningSecret();
      assert.match(secret, /^whsec_[A-Za-z0-9_-]{32}$/);
      assert.ok(isSigningSecret(secret));
      seen.add(secret);
    }
    assert.equal(seen.size, 100);
  });

  test("every byte value maps into the alphabet, all 64 characters reachable", () => {
    const all = generateSigningSecret(() => Uint8Array.from({ length: 32 }, (_, i) => i * 2 + 1));
    const rest = generateSigningSecret(() => Uint8Array.from({ length: 32 }, (_, i) => 192 + i * 2));
    assert.ok(isSigningSecret(all) && isSigningSecret(rest));
    assert.equal(new Set((all.slice(6) + rest.slice(6)).split("")).size, 64);
  });

  test("a random source that returns too few bytes is an error, not a short secret", () => {
    assert.throws(() => generateSigningSecret(() => new Uint8Array(31)), RangeError);
  });

  test("isSigningSecret refuses other shapes", () => {
    for (const bad of [
      "",
      "whsec_",
      "whsec_" + "A".repeat(31),
      "whsec_" + "A".repeat(33),
      "whsec_" + "+".repeat(32),
    ]) {
      assert.ok(!isSigningSecret(bad), bad);
    }
    assert.ok(!isSigningSecret("WHSEC_" + "A".repeat(32)));
  });
});
