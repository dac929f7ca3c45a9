/**
 * How far V8 lets the heap grow between two full collections, for `partner-yield serve`
 * (`--heap-growth`). By default V8 chooses (up to 4x what the last full collection kept), and under
 * sustained load the process's RSS saw-tooths by about a quarter. A factor of 2
 * (`--heap-growth 100`) keeps the RSS flatter for more full collections of a small heap, which show
 * in a sustained POST load's tail; it is the operator's choice, off by default (docs/performance.md,
 * "The RSS saw-tooth and the heap growing factor"). An embedding team's process is its own to tune
 * (node's `--heap-growing-percent`).
 * @module
 */
import { setFlagsFromString } from "node:v8";

/** The serve command's default: 0, V8's own choice. */
export const DEFAULT_HEAP_GROWTH_PERCENT = 0;

/**
 * Sets V8's heap growing factor to 1 + `percent` / 100; 0 leaves V8's own choice (or what node's
 * `--heap-growing-percent` set) alone. Returns the flag set, if any.
 */
export function setHeapGrowth(
  percent: number,
  setFlags: (flags: string) => void = setFlagsFromString,
): string | undefined {
  if (!Number.isSafeInteger(percent) || percent < 0) {
    throw new RangeError(`the heap growth must be a non-negative integer percentage, not ${percent}`);
  }
  if (percent === 0) return undefined;
  const flag = `--heap-growing-percent=${percent}`;
  setFlags(flag);
  return flag;
}
