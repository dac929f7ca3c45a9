/**
 * Embedded targets for the harness's own tests: clean or with one fault, on 127.0.0.1:0.
 */
import { type EmbeddedTarget, embeddedSettings } from "../../src/embedded.js";
import { type HandlerWrapper, startFaultyTarget } from "../../src/faults/server.js";
import { type RunReport, type RunSettings, runConformance } from "../../src/runner.js";

/** The embedded server (fixtures, demo credentials), clean or with `fault`. */
export function startTarget(fault?: HandlerWrapper, quota?: number): Promise<EmbeddedTarget> {
  return startFaultyTarget(fault, quota === undefined ? {} : { quota });
}

/** Runs against a target with a fixed seed; `overrides` win. */
export function runAgainst(target: EmbeddedTarget, overrides: Partial<RunSettings> = {}): Promise<RunReport> {
  return runConformance(embeddedSettings(target, { seed: 20261123, ...overrides }));
}

/** `ID: message` of the checks that failed, for assertion messages. */
export function failures(report: RunReport): string {
  return report.results
    .filter((r) => r.status === "failed")
    .map((r) => `${r.id} ${r.status}: ${r.message ?? ""}`)
    .join("\n");
}

/** `ID: message` of the checks that did not pass, for assertion messages. */
export function notPassed(report: RunReport): string {
  return report.results
    .filter((r) => r.status !== "passed")
    .map((r) => `${r.id} ${r.status}: ${r.message ?? ""}`)
    .join("\n");
}
