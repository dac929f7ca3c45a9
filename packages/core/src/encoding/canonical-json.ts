/**
 * Canonical JSON for idempotency fingerprints (CONTRACT §5): object keys sorted by UTF-16 code
 * unit at every level, no insignificant whitespace, so a retry that re-serialises the same event
 * fingerprints the same.
 * @module
 */

/**
 * Deepest nesting of objects and arrays accepted; deeper input is refused (a 400, not a stack
 * overflow).
 * @example canonicalJson(JSON.parse("[".repeat(65) + "]".repeat(65))); // throws RangeError
 */
export const MAX_JSON_DEPTH = 64;

function serialise(value: unknown, depth: number): string | undefined {
  if (
    value === null ||
    typeof value === "string" ||
    typeof value === "number" ||
    typeof value === "boolean"
  ) {
    return JSON.stringify(value);
  }
  if (typeof value === "bigint") throw new TypeError("canonicalJson cannot serialise a bigint");
  if (typeof value !== "object") return undefined; // undefined, function, symbol: omitted, as JSON.stringify does
  if (depth >= MAX_JSON_DEPTH) throw new RangeError(`JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`);
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
 * @throws RangeError when objects and arrays nest deeper than `MAX_JSON_DEPTH`.
 * @throws TypeError for a value JSON cannot represent at the top level (undefined, bigint, …).
 * @example canonicalJson({ b: 1, a: [true, { d: null, c: "x" }] }); // '{"a":[true,{"c":"x","d":null}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  const text = serialise(value, 0);
  if (text === undefined) throw new TypeError(`canonicalJson cannot serialise a ${typeof value}`);
  return text;
}
