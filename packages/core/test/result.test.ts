/** `Result`: the one way core reports an invalid input. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { accept, refuse, unwrap } from "../src/result.js";

test("accept and refuse build the two shapes; unwrap takes the value", () => {
  assert.deepEqual(accept(5n), { ok: true, value: 5n });
  assert.deepEqual(refuse("too_long", "amount is too long"), {
    ok: false,
    code: "too_long",
    reason: "amount is too long",
  });
  assert.equal(unwrap(accept("x")), "x");
});

test("unwrap of a refusal is a RangeError naming the code and the reason", () => {
  assert.throws(() => unwrap(refuse("not_hex", "character 5 is not hexadecimal")), {
    name: "RangeError",
    message: "not_hex: character 5 is not hexadecimal",
  });
});
