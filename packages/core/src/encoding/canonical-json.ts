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

/**
 * What a walk found besides the text (whether any number occurs, `canonicalJsonScan`), and what
 * the caller knows of its strings (`CanonicalJsonOptions.unescaped`).
 */
interface Walk {
  numbers: boolean;
  readonly unescaped: boolean;
}

/** `JSON.stringify` of a string; `"` + text + `"` when the caller knows it needs no escape. */
function quoted(text: string, walk: Walk): string {
  return walk.unescaped ? `"${text}"` : JSON.stringify(text);
}

function serialise(value: unknown, depth: number, walk: Walk): string | undefined {
  if (typeof value === "string") return quoted(value, walk);
  if (typeof value === "number") {
    walk.numbers = true;
    return JSON.stringify(value);
  }
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "bigint") throw new Unserialisable("not_json", "a bigint cannot be written as JSON");
  if (typeof value !== "object") return undefined; // undefined, function, symbol: omitted, as JSON.stringify does
  if (depth >= MAX_JSON_DEPTH) {
    throw new Unserialisable("too_deep", `JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`);
  }
  // Built with `+=` (V8 joins such strings lazily), not arrays and `join`: fewer allocations.
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      out += serialise(value[i], depth + 1, walk) ?? "null";
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  // Ordered by UTF-16 code unit, the order required; keys already in that order (common for
  // objects a client built sorted) are not sorted again.
  if (!inOrder(keys)) sortKeys(keys);
  let out = "{";
  let first = true;
  for (const key of keys) {
    const member = serialise(record[key], depth + 1, walk);
    if (member === undefined) continue;
    out += first ? `${quoted(key, walk)}:${member}` : `,${quoted(key, walk)}:${member}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * Sorts member names by UTF-16 code unit (what `<` compares), in place: by insertion when there
 * are few (no allocation; `Array.prototype.sort` took a work array for three names), otherwise by
 * `sort()`, whose default order is the same. Names of one object are never equal.
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
}

function inOrder(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! > keys[i]!) return false;
  return true;
}

/**
 * Serialises a parsed JSON value canonically: keys sorted at every level, no whitespace,
 * primitives as `JSON.stringify` writes them. Meant for `JSON.parse` output.
 * @example canonicalJson({ b: 1, a: [true, { d: null, c: "x" }] }); // { ok: true, value: '{"a":[true,{"c":"x","d":null}],"b":1}' }
 * @example canonicalJson(10n).code; // "not_json"
 */
export function canonicalJson(value: unknown): Result<string, CanonicalJsonRefusal> {
  const scanned = canonicalJsonScan(value);
  return scanned.ok ? accept(scanned.value.text) : scanned;
}

export interface CanonicalJsonOptions {
  /**
   * The caller knows that no string in the value, member names included, holds a character
   * `JSON.stringify` escapes (`"`, `\`, U+0000–U+001F, a lone surrogate), so each is written as
   * `"` + text + `"` without being scanned. True of anything `JSON.parse` made of a text with no
   * backslash that came from a strict UTF-8 decoder: an unescaped JSON string cannot hold `"`, `\`
   * or a control character, and only a `\u` escape can make a lone surrogate. Wrong, it writes
   * text that is not canonical; default false.
   */
  readonly unescaped?: boolean | undefined;
}

/**
 * `canonicalJson`, and whether the value holds any number (so a caller checking numbers in the
 * source text can skip that scan when there is none).
 * @example canonicalJsonScan({ a: "1" }); // { ok: true, value: { text: '{"a":"1"}', numbers: false } }
 * @example canonicalJsonScan(JSON.parse(text), { unescaped: !text.includes("\\") }); // text from a strict UTF-8 decoder
 */
export function canonicalJsonScan(
  value: unknown,
  options: CanonicalJsonOptions = {},
): Result<{ readonly text: string; readonly numbers: boolean }, CanonicalJsonRefusal> {
  const walk: Walk = { numbers: false, unescaped: options.unescaped === true };
  try {
    const text = serialise(value, 0, walk);
    if (text === undefined) return refuse("not_json", `a ${typeof value} cannot be written as JSON`);
    return accept({ text, numbers: walk.numbers });
  } catch (error) {
    if (error instanceof Unserialisable) return refuse(error.code, error.reason);
    throw error;
  }
}
