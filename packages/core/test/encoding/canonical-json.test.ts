import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { canonicalJson, canonicalJsonScan, MAX_JSON_DEPTH } from "../../src/encoding/canonical-json.js";
import { unwrap } from "../../src/result.js";
import { fcParams } from "../../src/testing/index.js";

/** The canonical text of a value the test knows to be serialisable. */
const canonical = (value: unknown): string => unwrap(canonicalJson(value));

/** The refusal code for a value that must be refused. */
function refusalOf(value: unknown): string {
  const result = canonicalJson(value);
  return result.ok ? "accepted" : result.code;
}

/** Re-serialises a JSON value with reversed key order and some whitespace. */
function reshuffled(value: unknown): string {
  if (Array.isArray(value)) return "[ " + value.map(reshuffled).join(" , ") + " ]";
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).reverse();
    return "{\n" + entries.map(([k, v]) => `  ${JSON.stringify(k)} : ${reshuffled(v)}`).join(",\n") + "\n}";
  }
  return JSON.stringify(value);
}

/** The definition, written plainly: sorted keys at every level, primitives as JSON.stringify writes them. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(record[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function holdsNumber(value: unknown): boolean {
  if (typeof value === "number") return true;
  if (value !== null && typeof value === "object") return Object.values(value).some(holdsNumber);
  return false;
}

/** Characters JSON.stringify escapes in a string: `"`, `\\`, controls and lone surrogates. */
const JSON_ESCAPED =
  /["\\\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The value with every character JSON escapes taken out of its strings and keys. */
function withoutEscapes<T>(value: T): T {
  if (typeof value === "string") return value.replace(JSON_ESCAPED, "") as T;
  if (Array.isArray(value)) return value.map(withoutEscapes) as T;
  if (value !== null && typeof value === "object") {
    // Object.fromEntries defines own properties, `__proto__` included.
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [withoutEscapes(k), withoutEscapes(v)]),
    ) as T;
  }
  return value;
}

function nested(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

describe("canonicalJson (CONTRACT §5)", () => {
  test("sorts keys at every level and drops whitespace", () => {
    assert.equal(
      canonical(JSON.parse('{ "b": 1, "a": [true, { "d": null, "c": "x" }], "A": {} }')),
      '{"A":{},"a":[true,{"c":"x","d":null}],"b":1}',
    );
  });

  test("orders keys by UTF-16 code unit, not by locale", () => {
    const value = { é: 1, z: 2, Z: 3, "😀": 4, "\uffff": 5, "": 6, "10": 7, "9": 8 };
    assert.equal(canonical(value), '{"":6,"10":7,"9":8,"Z":3,"z":2,"é":1,"😀":4,"\uffff":5}');
  });

  test("arrays keep their order", () => {
    assert.equal(canonical([3, 1, 2, { b: 0, a: 0 }]), '[3,1,2,{"a":0,"b":0}]');
  });

  test("primitives are written as JSON.stringify writes them", () => {
    assert.equal(canonical('he said "hi"\n'), JSON.stringify('he said "hi"\n'));
    assert.equal(canonical(1e21), "1e+21");
    assert.equal(canonical(-0), "0");
    assert.equal(canonical(null), "null");
    assert.equal(canonical({ a: undefined, b: 1 }), '{"b":1}');
    assert.equal(canonical([undefined]), "[null]");
  });

  test("a __proto__ key from JSON.parse is kept as data", () => {
    assert.equal(canonical(JSON.parse('{"__proto__":{"x":1},"a":2}')), '{"__proto__":{"x":1},"a":2}');
  });

  test(`nesting up to ${MAX_JSON_DEPTH} levels is fine; deeper is refused as too_deep, saying so`, () => {
    assert.equal(canonical(JSON.parse(nested(MAX_JSON_DEPTH))), nested(MAX_JSON_DEPTH));
    assert.equal(refusalOf(JSON.parse(nested(MAX_JSON_DEPTH + 1))), "too_deep");
    assert.equal(refusalOf(JSON.parse(nested(100_000))), "too_deep");
    const deepObject = JSON.parse('{"a":'.repeat(MAX_JSON_DEPTH + 1) + "1" + "}".repeat(MAX_JSON_DEPTH + 1));
    const refused = canonicalJson(deepObject);
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? "" : refused.reason, /deeper than 64 levels/);
  });

  test("values JSON cannot hold are refused as not_json, naming what failed", () => {
    assert.equal(refusalOf(undefined), "not_json");
    assert.equal(refusalOf(1n), "not_json");
    const nestedBigint = canonicalJson({ a: [1n] });
    assert.equal(nestedBigint.ok ? "accepted" : nestedBigint.code, "not_json");
    assert.match(nestedBigint.ok ? "" : nestedBigint.reason, /bigint/);
  });

  test("property: key order and whitespace do not change the result, which parses back to the same value", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = canonical(value);
        assert.equal(canonical(JSON.parse(reshuffled(value))), text);
        assert.equal(canonical(JSON.parse(text)), text);
        assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(value)));
        assert.doesNotMatch(text, /^\s|\s$/);
      }),
      fcParams(process.env),
    );
  });

  test("property: equals the plain definition (keys sorted at every level), and says whether a number occurs", () => {
    // Objects whose keys are already in order, in reverse order, and in random order.
    const sortedObject = fc
      .dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 })
      .map((d) => Object.fromEntries(Object.entries(d).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 6 }),
      sortedObject,
      sortedObject.map((o) => JSON.parse(reshuffled(o))),
    );
    fc.assert(
      fc.property(value, (v) => {
        const parsed = JSON.parse(JSON.stringify(v)) as unknown;
        const scanned = unwrap(canonicalJsonScan(parsed));
        assert.equal(scanned.text, reference(parsed));
        assert.equal(scanned.numbers, holdsNumber(parsed));
        assert.equal(canonical(parsed), scanned.text);
      }),
      fcParams(process.env),
    );
  });

  // Strings of any code points (astral ones, i.e. surrogate pairs, included). `unescaped` is for
  // the texts that come out of JSON.stringify without a backslash: values are generated of that
  // kind and of the other (one string that JSON escapes, somewhere), so every run checks both.
  const text = fc.string({ unit: "grapheme", maxLength: 12 });
  const anyValue = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }),
    fc.dictionary(text, fc.oneof(text, fc.integer(), fc.dictionary(text, text, { maxKeys: 3 })), {
      maxKeys: 5,
    }),
  );
  /** A value none of whose strings JSON escapes: the characters it would escape are taken out. */
  const plainValue = anyValue.map(withoutEscapes);
  /** A string holding at least one character JSON escapes. */
  const escapedString = fc
    .tuple(
      text.map(withoutEscapes),
      fc.oneof(
        fc.constantFrom('"', "\\", "\ud800", "\udfff"),
        fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
      ),
      text.map(withoutEscapes),
    )
    .map(([before, escaped, after]) => `${before}${escaped}${after}`);
  /** A value with one string JSON escapes, as a key or as a value. */
  const escapedValue = fc
    .tuple(plainValue, escapedString, fc.boolean())
    .map(([value, escaped, asKey]): unknown => (asKey ? { [escaped]: value } : [value, escaped]));
  const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  /** The value as a strict UTF-8 decoder hands its JSON text over, and that text parsed. */
  function throughUtf8(value: unknown): { source: string; parsed: unknown } {
    const source = utf8.decode(new TextEncoder().encode(JSON.stringify(value)));
    return { source, parsed: JSON.parse(source) as unknown };
  }
  function checkPlain(source: string, parsed: unknown): void {
    const fast = unwrap(canonicalJsonScan(parsed, { unescaped: true }));
    const slow = unwrap(canonicalJsonScan(parsed));
    assert.equal(fast.text, slow.text);
    assert.equal(fast.text, reference(parsed));
    assert.equal(fast.numbers, slow.numbers, source);
  }
  function checkEscaped(source: string, parsed: unknown): void {
    // A backslash in the source is an escape in some string: the fast text holds that string's
    // raw character instead, so it is not the canonical text.
    const fast = unwrap(canonicalJsonScan(parsed, { unescaped: true }));
    const slow = unwrap(canonicalJsonScan(parsed));
    assert.notEqual(fast.text, slow.text, source);
  }

  test("property: `unescaped` writes the same text for a value parsed from a strict UTF-8 text with no backslash", () => {
    fc.assert(
      fc.property(plainValue, (v) => {
        const { source, parsed } = throughUtf8(v);
        assert.ok(!source.includes("\\"), source);
        checkPlain(source, parsed);
      }),
      fcParams(process.env),
    );
  });

  test("property: on a text with a backslash `unescaped` writes another text (the option is the caller's promise)", () => {
    fc.assert(
      fc.property(escapedValue, (v) => {
        const { source, parsed } = throughUtf8(v);
        assert.ok(source.includes("\\"), source);
        checkEscaped(source, parsed);
      }),
      fcParams(process.env),
    );
  });

  test("property: on any value, `unescaped` writes the canonical text exactly when the source has no backslash", () => {
    fc.assert(
      fc.property(anyValue, (v) => {
        const { source, parsed } = throughUtf8(v);
        if (source.includes("\\")) checkEscaped(source, parsed);
        else checkPlain(source, parsed);
      }),
      fcParams(process.env),
    );
  });

  test("`unescaped` on one string: the caller's promise, not a check", () => {
    assert.equal(unwrap(canonicalJsonScan({ "é😀": "ü" }, { unescaped: true })).text, '{"é😀":"ü"}');
    assert.equal(unwrap(canonicalJsonScan({ a: 'x"y' })).text, '{"a":"x\\"y"}');
    // Default off: a quote inside a string is escaped.
    assert.equal(unwrap(canonicalJsonScan({ a: 'x"y' }, {})).text, '{"a":"x\\"y"}');
  });
});
