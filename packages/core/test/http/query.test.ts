import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ApiError } from "../../src/http/errors.js";
import { queryParam } from "../../src/http/query.js";
import { fcParams } from "../../src/testing/index.js";

/** What queryParam answers, by definition: form decoding of every part, errors as their code. */
function definition(query: string, name: string): string {
  let raw: string | undefined;
  let count = 0;
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    let decodedName: string;
    try {
      decodedName = decodeURIComponent((eq === -1 ? part : part.slice(0, eq)).replaceAll("+", " "));
    } catch {
      continue;
    }
    if (decodedName !== name) continue;
    count++;
    raw ??= eq === -1 ? "" : part.slice(eq + 1);
  }
  if (raw === undefined) return "absent";
  if (count > 1) return "error:repeated";
  try {
    return `value:${decodeURIComponent(raw.replaceAll("+", " "))}`;
  } catch {
    return "error:malformed";
  }
}

function answer(query: string, name: string): string {
  try {
    const value = queryParam(query, name);
    return value === undefined ? "absent" : `value:${value}`;
  } catch (error) {
    assert.ok(error instanceof ApiError && error.code === "invalid_parameter");
    return /times/.test(error.message) ? "error:repeated" : "error:malformed";
  }
}

test("property: queryParam decodes as form encoding does (plain text taken as it is, %, + and errors as defined)", () => {
  const part = fc.string({
    unit: fc.constantFrom("a", "m", "=", "%", "+", "2", "0", "B", "z", " ", "é"),
    maxLength: 8,
  });
  const query = fc
    .array(
      fc.oneof(
        part,
        part.map((v) => `a=${v}`),
      ),
      { maxLength: 5 },
    )
    .map((p) => p.join("&"));
  fc.assert(
    fc.property(query, (q) => {
      assert.equal(answer(q, "a"), definition(q, "a"));
    }),
    fcParams(process.env),
  );
});
