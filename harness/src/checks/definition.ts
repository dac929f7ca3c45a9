/**
 * What a conformance check is: a stable ID, the lines of interface.md or the CONTRACT it
 * enforces, what it costs, and either a scenario (requests of its own, judged in order) or a
 * response rule (applied by the runner to every response as it is recorded).
 * @module
 */

import type { Exchange } from "../http/client.js";
import type { CheckContext } from "./context.js";
import type { ResponseJudge } from "./judge.js";
import type { Category, Citation, FailureKind, Level, Need, PlanOptions } from "./types.js";

interface CheckCommon {
  /** Stable, e.g. `EVT-03`. Never reused for another rule. */
  readonly id: string;
  readonly title: string;
  readonly category: Category;
  /** The lowest level the check runs at. */
  readonly level: Level;
  /** The lines it enforces at its level: interface.md for `spec`, the CONTRACT for `reference`. */
  readonly cites: readonly Citation[];
  /** Gaps of interface.md ("not shown") the check leaves open at level `spec`. */
  readonly tolerates?: readonly Citation[];
  /** For a `spec` check: what it asserts in addition at level `reference`, and the lines that say so. */
  readonly reference?: { readonly asserts: string; readonly cites: readonly Citation[] };
  /** The kind of a failure the check reports without naming a more precise one. */
  readonly failure: FailureKind;
  /** Most requests the check sends (retries of a 429 aside). */
  readonly cost: number | ((options: PlanOptions) => number);
  /** How many of its requests are meant to fail authentication (CONTRACT §4 limits those per client). */
  readonly failedAuth?: number;
  readonly needs?: readonly Need[];
}

/** Sends its own requests and judges their answers, in the order of the registry. */
export interface ScenarioCheck extends CheckCommon {
  readonly kind: "scenario";
  run(t: CheckContext): Promise<void>;
}

/**
 * Judges every response of the run as it is recorded (Schemathesis's response checks): the
 * runner calls `inspect` for each exchange, its own `probe` requests (sent before the scenarios)
 * included. Its result is reported at the end of the run.
 */
export interface ResponseCheck extends CheckCommon {
  readonly kind: "response";
  /** Requests that make sure the run holds responses this rule applies to (counted in `cost`). */
  probe?(t: CheckContext): Promise<void>;
  inspect(exchange: Exchange, judge: ResponseJudge): void;
}

export type CheckDefinition = ScenarioCheck | ResponseCheck;

export function costOf(check: CheckDefinition, options: PlanOptions): number {
  return typeof check.cost === "number" ? check.cost : check.cost(options);
}
