/**
 * The few assertions the conformance suites need, with no test framework behind them: each
 * throws `SuiteAssertionError` (which every runner reports as a failure) with both values shown.
 */

export class SuiteAssertionError extends Error {
  override readonly name = "SuiteAssertionError";
}

/** Strict equality (`Object.is`). */
export function assertEqual<T>(actual: T, expected: T, message = "values differ"): void {
  if (!Object.is(actual, expected))
    throw new SuiteAssertionError(`${message}: expected ${show(expected)}, got ${show(actual)}`);
}

/** Structural equality of primitives, bigints, arrays, Maps and plain objects (keys in any order). */
export function assertDeepEqual(actual: unknown, expected: unknown, message = "values differ"): void {
  const path = firstDifference(actual, expected, "");
  if (path !== undefined)
    throw new SuiteAssertionError(
      `${message}: at ${path === "" ? "(root)" : path}: expected ${show(expected)}, got ${show(actual)}`,
    );
}

export function assertTrue(condition: boolean, message: string): asserts condition {
  if (!condition) throw new SuiteAssertionError(message);
}

function firstDifference(a: unknown, b: unknown, path: string): string | undefined {
  if (Object.is(a, b)) return undefined;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return path;
  if (Array.isArray(a) !== Array.isArray(b) || a instanceof Map !== b instanceof Map) return path;
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return `${path}.size`;
    for (const [key, value] of a) {
      if (!b.has(key)) return `${path}.get(${String(key)})`;
      const inner = firstDifference(value, b.get(key), `${path}.get(${String(key)})`);
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
  const aKeys = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const bKeys = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (aKeys.length !== bKeys.length) return path;
  for (const key of bKeys) {
    if (!Object.hasOwn(a, key)) return `${path}.${key}`;
    const inner = firstDifference(
      (a as Record<string, unknown>)[key],
      (b as Record<string, unknown>)[key],
      `${path}.${key}`,
    );
    if (inner !== undefined) return inner;
  }
  return undefined;
}

function show(value: unknown): string {
  try {
    const text = JSON.stringify(value, (_k, v: unknown) =>
      typeof v === "bigint" ? `${v}n` : v instanceof Map ? Object.fromEntries(v) : v,
    );
    if (text === undefined) return String(value);
    return text.length > 300 ? `${text.slice(0, 300)}…` : text;
  } catch {
    return String(value);
  }
}
