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
  for (const definition of properties) {
    const started = performance.now();
    const details = fc.check(definition.property(), {
      numRuns: options.runs,
      seed: options.seed,
      ...(options.path === undefined ? {} : { path: options.path }),
    });
    const durationMs = Math.round(performance.now() - started);
    const base = {
      id: definition.id,
      title: definition.title,
      statement: definition.statement,
      runs: details.numRuns,
      skipped: details.numSkips,
      durationMs,
    };
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
        : `partner-yield-conformance properties --only ${definition.id} --seed ${details.seed} --path "${path}"`;
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
      `✖ ${definition.id}  ${definition.title}  (failed after ${details.numRuns} runs, ${durationMs} ms)`,
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
