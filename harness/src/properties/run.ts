/**
 * Runs the property suite and reports each property: its run count, its result, and for a failure
 * the counterexample with the seed and path that replay it.
 * @module
 */
import fc from "fast-check";
import { VERSION } from "../version.js";
import type { PropertyDefinition } from "./registry.js";

export interface PropertyOptions {
  readonly runs: number;
  readonly seed: number;
  /** Replays one counterexample (with its seed). */
  readonly path?: string | undefined;
  /** The command that starts `properties` as the user started it (for the replay line). */
  readonly command?: string;
  /** Milliseconds since some origin; `performance.now` by default (fixed for the docs). */
  readonly now?: () => number;
}

export interface PropertyResult {
  readonly id: string;
  readonly title: string;
  readonly statement: string;
  readonly status: "passed" | "failed";
  /** Inputs tried (skipped ones excluded). */
  readonly runs: number;
  readonly skipped: number;
  readonly durationMs: number;
  readonly counterexample?: string;
  readonly seed?: number;
  readonly path?: string;
  readonly error?: string;
  readonly replay?: string;
}

export interface PropertyReport {
  readonly tool: "partner-yield-conformance properties";
  readonly version: string;
  readonly seed: number;
  readonly runsPerProperty: number;
  readonly results: readonly PropertyResult[];
  readonly passed: number;
  readonly failed: number;
}

/** Runs `properties` with one seed (so each replays alone with the same seed). */
export function runProperties(
  properties: readonly PropertyDefinition[],
  options: PropertyOptions,
  print: (line: string) => void = () => {},
): PropertyReport {
  print("Auditors' property suite: the yield math of CONTRACT §2, run against @partner-yield/core");
  print(
    `seed ${options.seed} · ${options.path === undefined ? `${options.runs} runs per property` : `replaying path ${options.path}`}`,
  );
  print("");
  const results: PropertyResult[] = [];
  const now = options.now ?? (() => performance.now());
  const command = options.command ?? "partner-yield-conformance properties";
  for (const definition of properties) {
    const started = now();
    const details = fc.check(definition.property(), {
      numRuns: options.runs,
      seed: options.seed,
      ...(options.path === undefined ? {} : { path: options.path }),
    });
    const durationMs = Math.round(now() - started);
    const base = {
      id: definition.id,
      title: definition.title,
      statement: definition.statement,
      runs: details.numRuns,
      skipped: details.numSkips,
      durationMs,
    };
    if ((!details.failed && details.numRuns === 0) || (details.failed && details.counterexample === null)) {
      // Nothing was tested: never a pass (a --path that leads nowhere, or every input discarded).
      const error =
        options.path === undefined
          ? `ran ${details.numRuns} inputs (${details.numSkips} generated inputs discarded): ${details.numRuns === 0 ? "nothing was tested" : "too many discarded to judge"}`
          : `ran 0 inputs: the path "${options.path}" leads to no input of ${definition.id} with seed ${options.seed}`;
      results.push({ ...base, status: "failed", error });
      print(`✖ ${definition.id}  ${definition.title}  (${details.numRuns} runs)`);
      print(`    error: ${error}`);
      continue;
    }
    if (!details.failed) {
      results.push({ ...base, status: "passed" });
      const discarded = details.numSkips > 0 ? `, ${details.numSkips} generated inputs discarded` : "";
      print(
        `✔ ${definition.id}  ${definition.title}  (${details.numRuns} runs${discarded}, ${durationMs} ms)`,
      );
      print(`         ${definition.statement}`);
      continue;
    }
    const path = details.counterexamplePath ?? undefined;
    const error =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    const replay =
      path === undefined
        ? undefined
        : `${command} --only ${definition.id} --seed ${details.seed} --path "${path}"`;
    results.push({
      ...base,
      status: "failed",
      counterexample: details.counterexample === null ? "(none)" : fc.stringify(details.counterexample),
      seed: details.seed,
      ...(path === undefined ? {} : { path }),
      error,
      ...(replay === undefined ? {} : { replay }),
    });
    print(
      `✖ ${definition.id}  ${definition.title}  (failed after ${details.numRuns} run${details.numRuns === 1 ? "" : "s"}, ${durationMs} ms)`,
    );
    print(`         ${definition.statement}`);
    print(
      `    counterexample: ${details.counterexample === null ? "(none)" : fc.stringify(details.counterexample)}`,
    );
    print(`    error: ${error}`);
    print(`    seed ${details.seed}, path "${path ?? ""}"`);
    if (replay !== undefined) print(`    replay: ${replay}`);
  }
  const failed = results.filter((r) => r.status === "failed").length;
  print("");
  print(`${results.length - failed} passed, ${failed} failed · seed ${options.seed}`);
  return {
    tool: "partner-yield-conformance properties",
    version: VERSION,
    seed: options.seed,
    runsPerProperty: options.runs,
    results,
    passed: results.length - failed,
    failed,
  };
}
