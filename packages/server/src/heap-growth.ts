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
 * 3-7 ms each). Under sustained signed-POST load those extra collections show in the tail: in 10
 * of the bench runner's alternating rounds, p99 1.27x the bare server's against 1.11x for a build
 * defaulting to 0 (5 rounds did not separate them; docs/performance.md, "The RSS saw-tooth and the
 * heap growing factor").
 * 0 is the setting for a server that weighs POST latency over flat memory. The serve command sets
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
