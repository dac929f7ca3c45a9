/**
 * The vocabulary of the conformance runner: levels, categories, what a check may need, what it
 * costs, how a failure is classified and what a result holds. Imports nothing, so every other
 * module can import it without a circle.
 * @module
 */

/**
 * `spec` checks only what docs/interface.md states (plus "no 5xx"); `reference` adds the decisions of
 * docs/contract.md. A check of level `spec` runs at both levels and may assert more at `reference`.
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

/**
 * `scenario`: sends its own requests, in order, and judges their answers. `response`: judges every
 * response of the run as it is recorded (after a few requests of its own, sent first).
 */
export type CheckKind = "scenario" | "response";

/** What kind of rule a failure broke, for JSON and JUnit consumers (Schemathesis-style). */
export type FailureKind =
  | "transport"
  | "server_error"
  | "status"
  | "error_code"
  | "not_json"
  | "schema"
  | "header"
  | "value"
  | "state"
  | "secret_leak"
  | "check_error";

/** Every failure kind and what it means. */
export const FAILURE_KINDS: Readonly<Record<FailureKind, string>> = {
  transport: "no response: the connection failed or timed out",
  server_error: "a 5xx answer",
  status: "an unexpected HTTP status (a refusal where an answer was due, or the reverse, or another status)",
  error_code: "the right status with the wrong problem code (level reference)",
  not_json: "a body that should be JSON is not",
  schema: "a body that does not have the fields and types of its schema",
  header: "a header missing or wrong",
  value: "a figure or field that differs from what the rule computes",
  state: "stateful behaviour broken: idempotency, ordering, counting, isolation",
  secret_leak: "a response that repeats a secret",
  check_error: "the check itself stopped on an unexpected error (a harness bug: please report it)",
};

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

/**
 * A line of a normative document a check enforces: `quote` is its text, verbatim (a test finds
 * it in the document's section), so the claim "this check enforces that line" can be checked.
 */
export interface Citation {
  /** interface.md, the CONTRACT, or our decisions where the CONTRACT is silent. */
  readonly document: "interface.md" | "CONTRACT" | "decisions";
  /** `§4.3`, `§5` (a numbered rule is found in its section); for the decisions, a heading. */
  readonly section: string;
  readonly quote: string;
}

/** How each document is named in reports and docs. */
export const DOCUMENT_NAMES: Readonly<Record<Citation["document"], string>> = {
  "interface.md": "interface.md",
  CONTRACT: "CONTRACT",
  decisions: "docs/contract.md",
};

/** `passed` and `skipped` as usual; `warning` is a check that ended inconclusive or with a finding that is not a failure. */
export type CheckStatus = "passed" | "failed" | "warning" | "skipped";

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
  readonly kind: CheckKind;
  readonly level: Level;
  /** Where the rule comes from, e.g. `interface.md §4.3`. */
  readonly source: string;
  readonly status: CheckStatus;
  /** Why it failed, warned or was skipped. */
  readonly message: string | undefined;
  /** Set when it failed. */
  readonly failureKind: FailureKind | undefined;
  /** Remarks on a check that ran (a field interface.md does not name, a moving position, …). */
  readonly notes: readonly string[];
  readonly evidence: readonly Evidence[];
  readonly requests: number;
  readonly durationMs: number;
  /** Set on an opt-in check the run did not opt into (RL-03): its skip is not a gap `--fail-on-skip` counts. */
  readonly optIn?: boolean;
}

/** `interface.md §4.3, §5.5; CONTRACT §3` from citations, in order, each section once. */
export function sourceOf(cites: readonly Citation[]): string {
  const byDocument = new Map<string, string[]>();
  for (const c of cites) {
    const name = DOCUMENT_NAMES[c.document];
    const sections = byDocument.get(name) ?? [];
    const section = c.document === "decisions" ? `(${c.section})` : c.section;
    if (!sections.includes(section)) sections.push(section);
    byDocument.set(name, sections);
  }
  return [...byDocument.entries()].map(([doc, sections]) => `${doc} ${sections.join(", ")}`).join("; ");
}
