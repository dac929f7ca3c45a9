/**
 * The tables of docs/conformance.md and docs/math.md, generated from the registries so the docs
 * cannot drift from the code (a test compares them).
 * @module
 */
import { CHECKS } from "../checks/registry.js";
import { type CheckDefinition, costOf } from "../checks/types.js";
import { DEFAULTS } from "../config.js";
import { FAULTS } from "../faults/faults.js";
import { PROPERTIES } from "../properties/registry.js";

const DEFAULT_PLAN = {
  yieldSamples: DEFAULTS.yieldSamples,
  productSample: DEFAULTS.productSample,
  concurrentDuplicates: DEFAULTS.concurrentDuplicates,
  probeBudget: DEFAULTS.probeBudget,
};

const NEEDS: Readonly<Record<string, string>> = {
  signingSecret: "signing secret",
  otherEnvKey: "other-env key",
  foreignSlug: "`--foreign-slug`",
  wallet: "`--wallet`",
  rateLimitProbe: "`--rate-limit-probe`",
  fixtures: "`--fixtures`",
  revokedKey: "revoked key",
};

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

function costText(check: CheckDefinition): string {
  if (typeof check.cost === "number") return String(check.cost);
  const cost = costOf(check, DEFAULT_PLAN);
  const knob =
    check.id === "RL-03"
      ? "`--probe-budget`"
      : check.id.startsWith("EVT")
        ? "`--concurrency`"
        : check.id.startsWith("YLD")
          ? "`--yield-samples`"
          : "`--product-sample`";
  return `${cost} (${knob})`;
}

/** Every check by ID. */
export function checksTable(): string {
  const rows = [
    "| ID | Level | Check | Source | At level reference also | Requests | Needs |",
    "|---|---|---|---|---|---|---|",
    ...CHECKS.map(
      (c) =>
        `| ${c.id} | ${c.level} | ${cell(c.title)} | ${cell(c.source)} | ${cell(c.reference ?? "")} | ${costText(c)} | ${(c.needs ?? []).map((n) => NEEDS[n]).join(", ")} |`,
    ),
  ];
  return rows.join("\n");
}

/** Counts and bounds of a full run, with the default options. */
export function checksSummary(): string {
  const spec = CHECKS.filter((c) => c.level === "spec").length;
  const optIn = CHECKS.filter((c) => c.needs?.includes("rateLimitProbe"));
  const bound = (level: "spec" | "reference") =>
    1 +
    CHECKS.filter((c) => !optIn.includes(c) && (level === "reference" || c.level === "spec")).reduce(
      (n, c) => n + costOf(c, DEFAULT_PLAN),
      0,
    );
  const failedAuth = CHECKS.reduce((n, c) => n + (c.failedAuth ?? 0), 0);
  return [
    `${CHECKS.length} checks: ${spec} of level \`spec\`, ${CHECKS.length - spec} of level \`reference\`. A full run sends at most`,
    `${bound("reference")} requests at level \`reference\` and ${bound("spec")} at level \`spec\` (the first request, reading the`,
    `product list, included), plus up to ${optIn.reduce((n, c) => n + costOf(c, DEFAULT_PLAN), 0)} with \`--rate-limit-probe\`. ${failedAuth} of its requests fail`,
    "authentication on purpose.",
  ].join("\n");
}

/** Every injected fault and the checks that catch it. */
export function faultsTable(): string {
  return [
    "| Fault | What the faulty server does | Caught by | Also at level spec |",
    "|---|---|---|---|",
    ...FAULTS.map(
      (f) => `| \`${f.id}\` | ${cell(f.description)} | ${f.caughtBy.join(", ")} | ${f.atSpec ? "yes" : ""} |`,
    ),
  ].join("\n");
}

/** Every property of the auditors' suite. */
export function propertiesTable(): string {
  return [
    "| ID | Property | Statement | What it proves |",
    "|---|---|---|---|",
    ...PROPERTIES.map((p) => `| ${p.id} | ${cell(p.title)} | ${cell(p.statement)} | ${cell(p.proves)} |`),
  ].join("\n");
}

export const GENERATED_BLOCKS = {
  "docs/conformance.md": { summary: checksSummary, checks: checksTable, faults: faultsTable },
  "docs/math.md": { properties: propertiesTable },
} as const;

/**
 * Replaces the content between `<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->`.
 * @throws Error when the markers are missing.
 */
export function replaceGenerated(document: string, name: string, content: string): string {
  const begin = `<!-- BEGIN GENERATED: ${name} -->`;
  const end = `<!-- END GENERATED: ${name} -->`;
  const from = document.indexOf(begin);
  const to = document.indexOf(end);
  if (from === -1 || to === -1 || to < from) throw new Error(`markers for "${name}" not found`);
  return `${document.slice(0, from + begin.length)}\n${content}\n${document.slice(to)}`;
}
