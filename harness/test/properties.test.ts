/**
 * The auditors' property suite: every property holds against the core, and a failing one prints
 * a seed and path that replay exactly its counterexample.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { annualYield, monthlyYield, WAD } from "@partner-yield/core/math";
import fc from "fast-check";
import { main } from "../src/main.js";
import { principalUnits, rateWad } from "../src/properties/arbitraries.js";
import { PROPERTIES, type PropertyDefinition } from "../src/properties/registry.js";
import { runProperties } from "../src/properties/run.js";
import { captureIo } from "./support/io.js";

/** monthly = annual / 12, rounded up: the mistake P-09 and the digit-for-digit check exist for. */
const brokenMonthly: PropertyDefinition = {
  id: "P-XX",
  title: "a wrong monthly formula (APY / 12, rounded up) stays under a twelfth of the year",
  statement: "ceil(annual / 12) × 12 ≤ P × n",
  proves: "nothing: it is false, to test the reporting",
  source: "test",
  property: () =>
    fc.property(principalUnits, rateWad, (p, n) => {
      const annual = annualYield(p, n);
      const wrongMonthly = annual >= 0n ? (annual + 11n) / 12n : annual / 12n;
      if (wrongMonthly * 12n * WAD > p * n) throw new Error(`monthly ${wrongMonthly} × 12 exceeds P × n`);
    }) as fc.IProperty<unknown[]>,
};

describe("the property suite", () => {
  test("has stable, unique IDs and says what each property proves", () => {
    PROPERTIES.forEach((p, i) => {
      assert.equal(p.id, `P-${String(i + 1).padStart(2, "0")}`);
      assert.ok(p.title.length > 0 && p.statement.length > 0 && p.proves.length > 20, p.id);
      assert.match(p.source, /CONTRACT §/);
    });
  });

  test("every property holds against the core (300 runs, fixed seed)", () => {
    const report = runProperties(PROPERTIES, { runs: 300, seed: 20261123 });
    const failures = report.results.filter((r) => r.status === "failed");
    assert.deepEqual(failures, []);
    for (const r of report.results) assert.ok(r.runs >= 100, `${r.id} ran only ${r.runs} times`);
  });

  test("the console says how many generated inputs a property discarded", () => {
    const lines: string[] = [];
    const p14 = PROPERTIES.filter((p) => p.id === "P-14");
    runProperties(p14, { runs: 100, seed: 1 }, (line) => lines.push(line));
    assert.match(lines.join("\n"), /✔ P-14 .*\(100 runs, [0-9]+ generated inputs discarded, /);
  });

  test("the suite still sees a bug: monthly yield as annual / 12 rounded up fails", () => {
    // The same principal and rate generators as P-09 catch the wrong formula.
    assert.ok(monthlyYield(1_000_000_000n, WAD / 20n) * 12n < annualYield(1_000_000_000n, WAD / 20n));
    const lines: string[] = [];
    const report = runProperties([brokenMonthly], { runs: 500, seed: 7 }, (line) => lines.push(line));
    const result = report.results[0]!;
    assert.equal(result.status, "failed");
    assert.equal(result.seed, 7);
    assert.match(result.path ?? "", /^[0-9]+(:[0-9]+)*$/);
    assert.match(lines.join("\n"), /counterexample: \[/);
    assert.match(
      lines.join("\n"),
      /replay: partner-yield-conformance properties --only P-XX --seed 7 --path "/,
    );

    // Replaying the seed and path runs that one counterexample again, and it fails the same way.
    const replay = runProperties([brokenMonthly], { runs: 500, seed: 7, path: result.path });
    assert.equal(replay.results[0]!.status, "failed");
    assert.equal(replay.results[0]!.counterexample, result.counterexample);
  });
});

describe("partner-yield-conformance properties", () => {
  test("runs one property with a seed and prints its run count and the seed", async () => {
    const { out, io: streams } = captureIo();
    const code = await main(["properties", "--only", "P-07", "--runs", "25", "--seed", "5"], streams);
    assert.equal(code, 0, out.stderr);
    assert.match(out.stdout, /✔ P-07 .*\(25 runs/);
    assert.match(out.stdout, /seed 5/);
    assert.doesNotMatch(out.stdout, /P-08/);
  });

  test("a property that ran 0 inputs is an error, never a pass (exit 1)", async () => {
    const { out, io: streams } = captureIo();
    const code = await main(["properties", "--only", "P-07", "--seed", "7", "--path", "0:0:1"], streams);
    assert.equal(code, 1, out.stdout);
    assert.match(out.stdout, /✖ P-07 .*\(0 runs\)/);
    assert.match(out.stdout, /ran 0 inputs: the path "0:0:1" leads to no input of P-07 with seed 7/);
    assert.doesNotMatch(out.stdout, /✔/);
  });

  test("the replay line is the command the user started, as printed", async () => {
    const lines: string[] = [];
    runProperties([brokenMonthly], { runs: 200, seed: 7, command: "pnpm properties" }, (l) => lines.push(l));
    assert.match(lines.join("\n"), /replay: pnpm properties --only P-XX --seed 7 --path "/);
  });

  test("refuses a replay path without a seed, and unknown properties (exit 2)", async () => {
    for (const args of [
      ["properties", "--only", "P-07", "--path", "3:1"],
      ["properties", "--only", "P-99"],
      ["properties", "--seed", "1", "--path", "3:1"],
      ["properties", "--runs", "zero"],
    ]) {
      const { out, io: streams } = captureIo();
      assert.equal(await main(args, streams), 2, args.join(" "));
      assert.match(out.stderr, /partner-yield-conformance: /);
    }
  });
});
