import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BASE62_ALPHABET, encodeBase62, isBase62, randomBase62 } from "../../src/auth/base62.js";

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
