/**
 * `--heap-growth` (PARTNER_YIELD_HEAP_GROWTH_PERCENT): parsed with its variable and bounds, and
 * turned into V8's `--heap-growing-percent` (none for 0, V8's own choice).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { parseCommandLine, UsageError } from "../src/cli-options.js";
import { DEFAULT_HEAP_GROWTH_PERCENT, setHeapGrowth } from "../src/heap-growth.js";

function heapGrowth(argv: string[], env: Record<string, string> = {}): number {
  const command = parseCommandLine(["serve", ...argv], env);
  assert.equal(command.command, "serve");
  return command.config.heapGrowthPercent;
}

test("the flag, its variable and its default", () => {
  assert.equal(DEFAULT_HEAP_GROWTH_PERCENT, 0); // V8's own choice unless the operator sets one
  assert.equal(heapGrowth([]), DEFAULT_HEAP_GROWTH_PERCENT);
  assert.equal(heapGrowth(["--heap-growth", "50"]), 50);
  assert.equal(heapGrowth(["--heap-growth", "0"]), 0);
  assert.equal(heapGrowth([], { PARTNER_YIELD_HEAP_GROWTH_PERCENT: "30" }), 30);
  assert.equal(heapGrowth(["--heap-growth", "40"], { PARTNER_YIELD_HEAP_GROWTH_PERCENT: "30" }), 40);
  for (const bad of ["-1", "1001", "1.5", "x"]) {
    assert.throws(
      () => heapGrowth([`--heap-growth=${bad}`]),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message === `--heap-growth must be an integer from 0 to 1000, not "${bad}"`,
    );
  }
  // An empty variable is no variable: the default.
  assert.equal(heapGrowth([], { PARTNER_YIELD_HEAP_GROWTH_PERCENT: "" }), DEFAULT_HEAP_GROWTH_PERCENT);
  assert.throws(
    () => heapGrowth([], { PARTNER_YIELD_HEAP_GROWTH_PERCENT: "lots" }),
    /PARTNER_YIELD_HEAP_GROWTH_PERCENT must be an integer from 0 to 1000, not "lots"/,
  );
});

test("a percentage sets V8's --heap-growing-percent; 0 sets nothing", () => {
  const set: string[] = [];
  assert.equal(
    setHeapGrowth(100, (flags) => set.push(flags)),
    "--heap-growing-percent=100",
  );
  assert.equal(
    setHeapGrowth(25, (flags) => set.push(flags)),
    "--heap-growing-percent=25",
  );
  assert.equal(
    setHeapGrowth(0, (flags) => set.push(flags)),
    undefined,
  );
  assert.deepEqual(set, ["--heap-growing-percent=100", "--heap-growing-percent=25"]);
  for (const bad of [-1, 1.5, Number.NaN]) {
    assert.throws(() => setHeapGrowth(bad, () => assert.fail("set")), RangeError);
  }
});

test("this node's V8 knows the flag (setFlagsFromString ignores a name it does not know)", () => {
  const options = execFileSync(process.execPath, ["--v8-options"], { encoding: "utf8" });
  assert.match(options, /^\s+--heap-growing-percent \(/m);
});
