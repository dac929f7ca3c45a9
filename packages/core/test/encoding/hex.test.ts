/**
 * `toHex` builds its text 32 bytes a call from reused character codes: lengths below, at and
 * across that batch must all come out as node's own hex.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { toHex } from "../../src/encoding/hex.js";
import { fcParams } from "../../src/testing/index.js";

test("toHex: lowercase, two digits a byte, every byte value", () => {
  assert.equal(toHex(new Uint8Array(0)), "");
  assert.equal(toHex(new Uint8Array([0, 1, 15, 16, 171, 255])), "00010f10abff");
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.equal(toHex(all), Buffer.from(all).toString("hex"));
});

test("property: equals node's hex for any bytes, whatever their length against the 32-byte batch", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      assert.equal(toHex(bytes), Buffer.from(bytes).toString("hex"));
      // A shorter call after a longer one: nothing of the reused codes leaks into the answer.
      assert.equal(toHex(bytes.subarray(0, 3)), Buffer.from(bytes.subarray(0, 3)).toString("hex"));
    }),
    fcParams(process.env),
  );
});
