import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { canonicalJson, MAX_JSON_DEPTH } from "../../src/encoding/canonical-json.js";
import { fcParams } from "../fc-config.js";

/** Re-serialises a JSON value with reversed key order and some whitespace. */
function reshuffled(value: unknown): string {
  if (Array.isArray(value)) return "[ " + value.map(reshuffled).join(" , ") + " ]";
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).reverse();
    return "{\n" + entries.map(([k, v]) => `  ${JSON.stringify(k)} : ${reshuffled(v)}`).join(",\n") + "\n}";
  }
  return JSON.stringify(value);
}

function nested(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

describe("canonicalJson (CONTRACT §5)", () => {
  test("sorts keys at every level and drops whitespace", () => {
    assert.equal(
      canonicalJson(JSON.parse('{ "b": 1, "a": [true, { "d": null, "c": "x" }], "A": {} }')),
      '{"A":{},"a":[true,{"c":"x","d":null}],"b":1}',
    );
  });

  test("orders keys by UTF-16 code unit, not by locale", () => {
    const value = { é: 1, z: 2, Z: 3, "😀": 4, "\uffff": 5, "": 6, "10": 7, "9": 8 };
    assert.equal(canonicalJson(value), '{"":6,"10":7,"9":8,"Z":3,"z":2,"é":1,"😀":4,"\uffff":5}');
  });

  test("arrays keep their order", () => {
    assert.equal(canonicalJson([3, 1, 2, { b: 0, a: 0 }]), '[3,1,2,{"a":0,"b":0}]');
  });

  test("primitives are written as JSON.stringify writes them", () => {
    assert.equal(canonicalJson('he said "hi"\n'), JSON.stringify('he said "hi"\n'));
    assert.equal(canonicalJson(1e21), "1e+21");
    assert.equal(canonicalJson(-0), "0");
    assert.equal(canonicalJson(null), "null");
    assert.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}');
    assert.equal(canonicalJson([undefined]), "[null]");
  });

  test("a __proto__ key from JSON.parse is kept as data", () => {
    assert.equal(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":2}')), '{"__proto__":{"x":1},"a":2}');
  });

  test(`nesting up to ${MAX_JSON_DEPTH} levels is fine; deeper throws RangeError`, () => {
    assert.equal(canonicalJson(JSON.parse(nested(MAX_JSON_DEPTH))), nested(MAX_JSON_DEPTH));
    assert.throws(() => canonicalJson(JSON.parse(nested(MAX_JSON_DEPTH + 1))), RangeError);
    assert.throws(() => canonicalJson(JSON.parse(nested(100_000))), RangeError);
    const deepObject = JSON.parse('{"a":'.repeat(MAX_JSON_DEPTH + 1) + "1" + "}".repeat(MAX_JSON_DEPTH + 1));
    assert.throws(() => canonicalJson(deepObject), RangeError);
  });

  test("values JSON cannot hold are refused at the top level", () => {
    assert.throws(() => canonicalJson(undefined), TypeError);
    assert.throws(() => canonicalJson(1n), TypeError);
  });

  test("property: key order and whitespace do not change the result, which parses back to the same value", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const canonical = canonicalJson(value);
        assert.equal(canonicalJson(JSON.parse(reshuffled(value))), canonical);
        assert.equal(canonicalJson(JSON.parse(canonical)), canonical);
        assert.deepEqual(JSON.parse(canonical), JSON.parse(JSON.stringify(value)));
        assert.doesNotMatch(canonical, /^\s|\s$/);
      }),
      fcParams(),
    );
  });
});
