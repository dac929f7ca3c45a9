import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { keccak_256 } from "@noble/hashes/sha3.js";
import fc from "fast-check";
import { parseAddress, toChecksumAddress } from "../../src/evm/address.js";
import { fcParams } from "../../src/testing/index.js";

const vectors = JSON.parse(readFileSync(new URL("../vectors/eip55.json", import.meta.url), "utf8")) as {
  valid: string[];
  checksummed_form: Record<string, string>;
};

/** Flips the case of the first letter (a–f) of the hex part, keeping mixed case. */
function flipOneLetter(address: string): string | undefined {
  for (let i = 2; i < address.length; i++) {
    const c = address.charAt(i);
    if (/[a-f]/.test(c)) return address.slice(0, i) + c.toUpperCase() + address.slice(i + 1);
    if (/[A-F]/.test(c)) return address.slice(0, i) + c.toLowerCase() + address.slice(i + 1);
  }
  return undefined;
}

function refused(input: string): string {
  const result = parseAddress(input);
  assert.equal(result.ok, false, input);
  return result.ok ? "" : result.reason;
}

describe("EIP-55 vectors", () => {
  test("every vector is its own checksum form and is accepted as is", () => {
    assert.ok(vectors.valid.length >= 8);
    for (const address of vectors.valid) {
      const expected = vectors.checksummed_form[address];
      assert.equal(toChecksumAddress(address), expected);
      assert.deepEqual(parseAddress(address), { ok: true, value: expected });
    }
  });

  test("all-lowercase and all-uppercase versions are accepted and echoed in checksum form", () => {
    for (const address of vectors.valid) {
      const expected = vectors.checksummed_form[address];
      const hex = address.slice(2);
      assert.deepEqual(parseAddress("0x" + hex.toLowerCase()), { ok: true, value: expected });
      assert.deepEqual(parseAddress("0x" + hex.toUpperCase()), { ok: true, value: expected });
      assert.equal(toChecksumAddress(hex.toLowerCase()), expected, "without 0x");
    }
  });

  test("one flipped-case letter in a mixed-case address is refused without revealing the checksum", () => {
    let tried = 0;
    for (const address of vectors.valid) {
      const hex = address.slice(2);
      if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) continue;
      const typo = flipOneLetter(address)!;
      const reason = refused(typo);
      assert.equal(reason, "mixed-case address fails its EIP-55 checksum");
      assert.ok(!reason.includes(address.slice(2, 10)));
      tried++;
    }
    assert.ok(tried >= 4);
  });
});

describe("parseAddress refusals (CONTRACT §3)", () => {
  const good = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

  test("wrong lengths", () => {
    assert.equal(
      refused(good.slice(0, -1)),
      "address must be 0x followed by 40 hexadecimal digits (got 39 characters after 0x)",
    );
    assert.match(refused(good + "0"), /got 41 characters after 0x/);
    assert.match(refused("0x"), /got 0 characters after 0x/);
    assert.match(refused("0x" + "0".repeat(100_000)), /got 100000 characters/);
  });

  test("missing 0x and the 0X prefix", () => {
    assert.match(refused(good.slice(2)), /missing 0x/);
    assert.match(refused(""), /missing 0x/);
    assert.equal(refused("0X" + good.slice(2).toLowerCase()), "address must start with a lowercase 0x");
    assert.match(refused(" " + good), /missing 0x/);
  });

  test("non-hex characters, naming the position", () => {
    assert.equal(
      refused("0x" + "g" + "0".repeat(39)),
      "address must be 0x followed by 40 hexadecimal digits (character 3 is not hexadecimal)",
    );
    assert.match(refused("0x" + "0".repeat(39) + " "), /character 42 is not hexadecimal/);
    assert.match(refused("0x" + "０".repeat(40)), /not hexadecimal/);
  });

  test("toChecksumAddress throws on malformed input", () => {
    assert.throws(() => toChecksumAddress("0x1234"), RangeError);
    assert.throws(() => toChecksumAddress("z".repeat(40)), RangeError);
  });
});

describe("properties", () => {
  const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString("hex"));

  test("lower, upper and checksum forms of any address parse to the same checksum form", () => {
    fc.assert(
      fc.property(address, (hex) => {
        const checksummed = toChecksumAddress(hex);
        assert.equal(checksummed.toLowerCase(), "0x" + hex);
        for (const form of ["0x" + hex, "0x" + hex.toUpperCase(), checksummed]) {
          assert.deepEqual(parseAddress(form), { ok: true, value: checksummed });
        }
      }),
      fcParams(process.env),
    );
  });

  test("flipping the case of any one letter of a checksummed mixed-case address is caught", () => {
    fc.assert(
      fc.property(address, fc.nat(39), (hex, index) => {
        const checksummed = toChecksumAddress(hex);
        const at = 2 + index;
        const c = checksummed.charAt(at);
        fc.pre(/[a-fA-F]/.test(c));
        const flipped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
        const typo = checksummed.slice(0, at) + flipped + checksummed.slice(at + 1);
        const body = typo.slice(2);
        fc.pre(body !== body.toLowerCase() && body !== body.toUpperCase());
        assert.equal(parseAddress(typo).ok, false);
      }),
      fcParams(process.env),
    );
  });
});

describe("the checksum cache changes no answer", () => {
  /** EIP-55 computed from scratch, without the module's cache. */
  function reference(lowerHex: string): string {
    const hash = keccak_256(new TextEncoder().encode(lowerHex));
    let out = "0x";
    for (let i = 0; i < 40; i++) {
      const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
      out += nibble >= 8 ? lowerHex[i]!.toUpperCase() : lowerHex[i]!;
    }
    return out;
  }

  test("first and repeated calls, past the cache's bound (6,000 addresses) and back to the vectors", () => {
    const seen: string[] = [];
    for (let i = 0; i < 6000; i++) {
      const hex = keccak_256(new TextEncoder().encode(`address ${i}`)).subarray(0, 20);
      const lower = Buffer.from(hex).toString("hex");
      seen.push(lower);
      assert.equal(toChecksumAddress(lower), reference(lower));
      assert.equal(toChecksumAddress(`0x${lower.toUpperCase()}`), reference(lower));
    }
    // The oldest entries were dropped; the answers are still computed right.
    for (const lower of seen.slice(0, 50)) assert.equal(toChecksumAddress(lower), reference(lower));
    for (const v of vectors.valid) {
      assert.equal(toChecksumAddress(v.toLowerCase()), v);
      assert.equal(unwrapAddress(v.toLowerCase()), v);
    }
  });
});

function unwrapAddress(input: string): string {
  const result = parseAddress(input);
  assert.ok(result.ok);
  return result.value;
}
