/**
 * Canonical JSON for idempotency fingerprints (CONTRACT §5): object keys sorted by UTF-16 code
 * unit at every level, no insignificant whitespace, so a retry that re-serialises the same event
 * fingerprints the same.
 * @module
 */
import { accept, type Result, refuse } from "../result.js";

/**
 * Deepest nesting of objects and arrays accepted; deeper input is refused (a 400, not a stack
 * overflow).
 * @example canonicalJson(JSON.parse("[".repeat(65) + "]".repeat(65))).code; // "too_deep"
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Why `canonicalJson` refused a value: nested deeper than `MAX_JSON_DEPTH`, or holding something
 * JSON cannot represent (a bigint anywhere; undefined, a function or a symbol at the top level).
 * @example const code: CanonicalJsonRefusal = "too_deep";
 */
export type CanonicalJsonRefusal = "too_deep" | "not_json";

/** Stops the walk; turned into the refusal by `canonicalJson`. */
class Unserialisable {
  constructor(
    readonly code: CanonicalJsonRefusal,
    readonly reason: string,
  ) {}
}

function serialise(value: unknown, depth: number): string | undefined {
  if (
    value === null ||
    typeof value === "string" ||
    typeof value === "number" ||
    typeof value === "boolean"
  ) {
    return JSON.stringify(value);
  }
  if (typeof value === "bigint") throw new Unserialisable("not_json", "a bigint cannot be written as JSON");
  if (typeof value !== "object") return undefined; // undefined, function, symbol: omitted, as JSON.stringify does
  if (depth >= MAX_JSON_DEPTH) {
    throw new Unserialisable("too_deep", `JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) items.push(serialise(value[i], depth + 1) ?? "null");
    return "[" + items.join(",") + "]";
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  // Default sort compares UTF-16 code units, which is the order required.
  for (const key of Object.keys(record).sort()) {
    const member = serialise(record[key], depth + 1);
    if (member !== undefined) members.push(JSON.stringify(key) + ":" + member);
  }
  return "{" + members.join(",") + "}";
}

/**
 * Serialises a parsed JSON value canonically: keys sorted at every level, no whitespace,
 * primitives as `JSON.stringify` writes them. Meant for `JSON.parse` output.
 * @example canonicalJson({ b: 1, a: [true, { d: null, c: "x" }] }); // { ok: true, value: '{"a":[true,{"c":"x","d":null}],"b":1}' }
 * @example canonicalJson(10n).code; // "not_json"
 */
export function canonicalJson(value: unknown): Result<string, CanonicalJsonRefusal> {
  try {
    const text = serialise(value, 0);
    if (text === undefined) return refuse("not_json", `a ${typeof value} cannot be written as JSON`);
    return accept(text);
  } catch (error) {
    if (error instanceof Unserialisable) return refuse(error.code, error.reason);
    throw error;
  }
}
