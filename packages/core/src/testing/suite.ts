/**
 * What every store conformance suite takes: the test functions of the caller's runner, so the
 * suites run under node:test, vitest or bun:test without importing any of them (the core imports
 * no `node:*` module).
 */

/** `describe` and `test` of node:test, vitest or bun:test (each accepts this shape). */
export interface TestFunctions {
  readonly describe: (name: string, body: () => void) => unknown;
  readonly test: (name: string, body: () => Promise<void>) => unknown;
}

/** Options every suite takes: a name for the report and the runner's test functions. */
export interface SuiteOptions extends TestFunctions {
  /** Shown in the report, e.g. "postgres". */
  readonly name: string;
}

/** A store or source that may hold a connection; suites close what they open. */
export interface Closable {
  close(): Promise<void>;
}

/** Closes `resource` (or what it resolves to) after `body`, whether it passed or threw. */
export async function using<T extends Closable>(
  opening: T | Promise<T>,
  body: (resource: T) => Promise<void>,
): Promise<void> {
  const resource = await opening;
  try {
    await body(resource);
  } finally {
    await resource.close();
  }
}

/**
 * A deterministic pseudo-random sequence (mulberry32), so a failing run can be replayed: the
 * suites print the seed in their failure messages.
 */
export function seededRandom(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below: number) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % below;
  };
}

/** A short random tag, so that data a suite writes never collides with another run's. */
export function uniqueTag(): string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
