import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { crc32 } from "../../src/auth/crc32.js";

const encoder = new TextEncoder();

describe("crc32", () => {
  test('the IEEE check value: crc32("123456789") = 0xCBF43926', () => {
    assert.equal(crc32(encoder.encode("123456789")), 0xcbf43926);
    assert.equal(crc32(new Uint8Array(0)), 0);
    assert.equal(crc32(encoder.encode("The quick brown fox jumps over the lazy dog")), 0x414fa339);
  });
});
