/**
 * How far V8 lets the heap grow between two full collections, for `partner-yield serve`.
 *
 * V8 picks the factor itself, up to 4x what the last full collection kept. Our server keeps about
 * 12 MiB, and under sustained load requests leave a few hundred bytes each that outlive the young
 * generation (node's own header strings and objects among them; the bare node:http server leaves
 * more). So the old space climbs 25-35 MiB before each full collection and falls back: the
 * process's RSS saw-tooths by a quarter (docs/performance.md, "The RSS saw-tooth and the heap
 * growing factor").
 * A factor of 2 (`--heap-growing-percent=100`) keeps it within 6-8 % over every 100 ms reading
 * (two `--rss` runs), for more full collections of a small heap (17 against 7 in 20 s of GET load,
 * 3-7 ms each). Under sustained signed-POST load on a server started by hand those extra
 * collections showed in the tail (p99 24.6-26.3 ms against 18.5-22.1 ms with V8's own choice); in
 * the bench runner's alternating rounds, builds defaulting to 0 and to 150 did no better than 100
 * (same section). 0 remains for a server that would rather not pay them. The serve command sets
 * it; an embedding team's process is its own to tune (node's `--heap-growing-percent`).
 * @module
 */
import { setFlagsFromString } from "node:v8";

/** The serve command's default: the heap may double between full collections. */
export const DEFAULT_HEAP_GROWTH_PERCENT = 100;

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
