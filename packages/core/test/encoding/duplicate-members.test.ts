/**
 * The duplicate-member scanner against a reference: JSON generated from a tree whose objects may
 * repeat names, written with random whitespace and random escaping of the names, so the scanner must
 * find exactly the first repeated name (in text order) with its path, or none.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { findDuplicateMember, jsonPointer } from "../../src/encoding/duplicate-members.js";
import { fcParams } from "../../src/testing/index.js";

type Node =
  | { kind: "object"; entries: [string, Node][] }
  | { kind: "array"; items: Node[] }
  | { kind: "leaf"; json: string };

const name = fc.oneof(
  fc.constantFrom("a", "b", "event_type", "__proto__", "", '"', "\\", "a\\", "/", "~", "é", "😀"),
  fc.string({ maxLength: 4 }),
);
const leaf = fc.oneof(
  fc.constantFrom("1", "-0.5e3", "true", "false", "null", '"x"', '"\\""', '"\\\\"', '"{\\"a\\":1}"', '"[,]"'),
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
);
const tree = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf.map((json): Node => ({ kind: "leaf", json })),
    fc
      .array(fc.tuple(name, tie("node")), { maxLength: 5 })
      .map((entries): Node => ({ kind: "object", entries })),
    fc.array(tie("node"), { maxLength: 4 }).map((items): Node => ({ kind: "array", items })),
  ),
})).node;

/** Writes a name as JSON.stringify does, or (flip) every UTF-16 unit as a \u escape. */
function writeName(text: string, flip: boolean): string {
  if (!flip) return JSON.stringify(text);
  let out = "";
  for (let k = 0; k < text.length; k++) out += `\\u${text.charCodeAt(k).toString(16).padStart(4, "0")}`;
  return `"${out}"`;
}

function write(node: Node, ws: string, flip: () => boolean): string {
  if (node.kind === "leaf") return node.json;
  if (node.kind === "array")
    return `[${ws}${node.items.map((n) => write(n, ws, flip)).join(`${ws},${ws}`)}${ws}]`;
  return `{${ws}${node.entries.map(([k, v]) => `${writeName(k, flip())}${ws}:${ws}${write(v, ws, flip)}`).join(`${ws},`)}${ws}}`;
}

function reference(node: Node, path: (string | number)[] = []): (string | number)[] | undefined {
  if (node.kind === "leaf") return undefined;
  if (node.kind === "array") {
    for (const [i, item] of node.items.entries()) {
      const found = reference(item, [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  const seen = new Set<string>();
  for (const [k, v] of node.entries) {
    if (seen.has(k)) return [...path, k];
    seen.add(k);
    const found = reference(v, [...path, k]);
    if (found) return found;
  }
  return undefined;
}

test("property: the scanner finds exactly the reference's first duplicate", () => {
  fc.assert(
    fc.property(
      tree,
      fc.constantFrom("", " ", "\n\t "),
      fc.infiniteStream(fc.boolean()),
      (node, ws, flips) => {
        const it = flips[Symbol.iterator]();
        const text = write(node, ws, () => it.next().value as boolean);
        JSON.parse(text); // valid JSON, as the scanner requires
        assert.deepEqual(findDuplicateMember(text), reference(node), text);
      },
    ),
    { ...fcParams(process.env), numRuns: Number(process.env["FC_NUM_RUNS"] ?? 2000) },
  );
});

test("examples, a wide object and a deep one", () => {
  assert.equal(findDuplicateMember('{"a":1,"b":2}'), undefined);
  assert.deepEqual(findDuplicateMember('{"a":1,"a":2}'), ["a"]);
  assert.deepEqual(findDuplicateMember('[0,{"x":[{"k":1},{"k":1,"k":2}]}]'), [1, "x", 1, "k"]);
  const wide = `{${Array.from({ length: 1000 }, (_, i) => `"m${i}":${i}`).join(",")},"m500":0}`;
  assert.deepEqual(findDuplicateMember(wide), ["m500"]);
  const deep = `${'{"a":'.repeat(10_000)}{"z":1,"z":2}${"}".repeat(10_000)}`;
  assert.equal(findDuplicateMember(deep)?.length, 10_001);
  assert.equal(jsonPointer("/body", ["a/b", "c~d", 3, ""]), "/body/a~1b/c~0d/3/");
});
