/**
 * What a conformance check is: a stable ID, where its rule comes from, what it costs, and the
 * function that runs it against a target.
 * @module
 */
import type { CheckContext } from "./context.js";

/**
 * `spec` checks only what interface.md states (plus "no 5xx"); `reference` adds the decisions of
 * CONTRACT.md. A check of level `spec` runs at both levels and may assert more at `reference`.
 */
export type Level = "spec" | "reference";
export const LEVELS: readonly Level[] = ["spec", "reference"];

export type Category =
  | "auth"
  | "products"
  | "position"
  | "yield-calc"
  | "events"
  | "errors"
  | "schema"
  | "rate-limit";

export const CATEGORIES: readonly Category[] = [
  "auth",
  "products",
  "position",
  "yield-calc",
  "events",
  "errors",
  "schema",
  "rate-limit",
];

/** An input a check cannot run without; absent against an external target, the check is skipped. */
export type Need =
  | "signingSecret"
  | "otherEnvKey"
  | "foreignSlug"
  | "wallet"
  | "rateLimitProbe"
  | "fixtures"
  | "revokedKey";

/** Knobs that change how many requests some checks send. */
export interface PlanOptions {
  /** Amounts sent to yield-calc by the seeded checks. */
  readonly yieldSamples: number;
  /** Products fetched one by one, at most. */
  readonly productSample: number;
  /** Identical events sent at once by the concurrency check. */
  readonly concurrentDuplicates: number;
  /** Requests the rate-limit probe may spend to reach a 429 (the quota it expects, plus one). */
  readonly probeBudget: number;
}

export interface CheckDefinition {
  /** Stable, e.g. `EVT-03`. Never reused for another rule. */
  readonly id: string;
  readonly title: string;
  readonly category: Category;
  /** The lowest level the check runs at. */
  readonly level: Level;
  /** Where the rule comes from: `interface.md §4.5`, `CONTRACT §5`. */
  readonly source: string;
  /** For a `spec` check: what it asserts in addition at level `reference`. */
  readonly reference?: string;
  /** Most requests the check sends (retries of a 429 aside). */
  readonly cost: number | ((options: PlanOptions) => number);
  /** How many of its requests are meant to fail authentication (CONTRACT §4 limits those per client). */
  readonly failedAuth?: number;
  readonly needs?: readonly Need[];
  run(t: CheckContext): Promise<void>;
}

export type CheckStatus = "passed" | "failed" | "skipped";

/** A request and response that show why a check failed. */
export interface Evidence {
  readonly request: string;
  readonly response: string;
  readonly curl: string;
}

export interface CheckResult {
  readonly id: string;
  readonly title: string;
  readonly category: Category;
  readonly level: Level;
  readonly source: string;
  readonly status: CheckStatus;
  /** Why it failed or was skipped. */
  readonly message: string | undefined;
  readonly warnings: readonly string[];
  readonly evidence: readonly Evidence[];
  readonly requests: number;
  readonly durationMs: number;
}

export function costOf(check: CheckDefinition, options: PlanOptions): number {
  return typeof check.cost === "number" ? check.cost : check.cost(options);
}
