/**
 * The tables of docs/conformance.md and docs/math.md, generated from the registries so the docs
 * cannot drift from the code (a test compares them).
 * @module
 */
import { type CheckDefinition, costOf } from "../checks/definition.js";
import { CHECKS } from "../checks/registry.js";
import { type Citation, DOCUMENT_NAMES, FAILURE_KINDS, type FailureKind, sourceOf } from "../checks/types.js";
import { DEFAULT_PLAN } from "../config.js";
import { ALTERNATIVES } from "../faults/alternatives.js";
import { FAULTS } from "../faults/faults.js";
import { API_PROPERTIES } from "../properties/api-properties.js";
import { PROPERTIES } from "../properties/registry.js";
import { requestBound } from "../runner.js";

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
    "| ID | Kind | Level | Check | Source | At level reference also | Requests | Needs |",
    "|---|---|---|---|---|---|---|---|",
    ...CHECKS.map(
      (c) =>
        `| ${c.id} | ${c.kind} | ${c.level} | ${cell(c.title)} | ${cell(sourceOf(c.cites))} | ${cell(c.reference?.asserts ?? "")} | ${costText(c)} | ${(c.needs ?? []).map((n) => NEEDS[n]).join(", ")} |`,
    ),
  ];
  return rows.join("\n");
}

function quoted(c: Citation): string {
  const section = c.document === "decisions" ? `(${c.section})` : c.section;
  return `${DOCUMENT_NAMES[c.document]} ${section}: “${c.quote}”`;
}

/** For each check, the lines it enforces, the gaps it leaves open, and what it adds at reference. */
export function citationsList(): string {
  const blocks = CHECKS.map((c) => {
    const lines = [`**${c.id}** ${c.title} (${c.kind}, level \`${c.level}\`)`, ""];
    for (const cite of c.cites) lines.push(`- enforces ${quoted(cite)}`);
    for (const cite of c.tolerates ?? []) lines.push(`- leaves open ${quoted(cite)}`);
    if (c.reference !== undefined) {
      lines.push(`- at level \`reference\` also: ${c.reference.asserts}`);
      for (const cite of c.reference.cites) lines.push(`  - ${quoted(cite)}`);
    }
    return lines.join("\n");
  });
  return blocks.join("\n\n");
}

/** Counts and bounds of a full run, with the default options. */
export function checksSummary(): string {
  const spec = CHECKS.filter((c) => c.level === "spec");
  const responses = CHECKS.filter((c) => c.kind === "response").length;
  const reference = requestBound(CHECKS, DEFAULT_PLAN);
  const specBound = requestBound(spec, DEFAULT_PLAN);
  const failedAuth = CHECKS.reduce((n, c) => n + (c.failedAuth ?? 0), 0);
  return [
    `${CHECKS.length} checks: ${spec.length} of level \`spec\`, ${CHECKS.length - spec.length} of level \`reference\`; ${responses} of them`,
    `response checks, ${CHECKS.length - responses} scenarios. A full run sends at most ${reference.run} requests at level \`reference\` and`,
    `${specBound.run} at level \`spec\` (the product list and the signing preflight included), plus up to ${reference.probe} with`,
    `\`--rate-limit-probe\`. ${failedAuth} of its requests fail authentication on purpose.`,
  ].join("\n");
}

/** Every injected fault and the checks that catch it. */
export function faultsTable(): string {
  return [
    "| Fault | What the faulty server does | Caught by | Also at level spec |",
    "|---|---|---|---|",
    ...FAULTS.map((f) => {
      const caught = [...f.caughtBy, ...(f.warnedBy ?? []).map((id) => `${id} (warning)`)].join(", ");
      return `| \`${f.id}\` | ${cell(f.description)} | ${caught} | ${f.atSpec ? "yes" : ""} |`;
    }),
  ].join("\n");
}

/** Every valid alternative, the line of interface.md that allows it, and the reference checks it fails. */
export function alternativesTable(): string {
  return [
    "| Alternative | What the deployment does | Allowed by | Fails at level reference |",
    "|---|---|---|---|",
    ...ALTERNATIVES.map(
      (a) =>
        `| \`${a.id}\` | ${cell(a.description)} | ${cell(quoted(a.allowedBy))} | ${a.failsAtReference.join(", ")} |`,
    ),
  ].join("\n");
}

/** The failure kinds of the JSON and JUnit reports. */
export function failureKindsTable(): string {
  return [
    "| Kind | Meaning |",
    "|---|---|",
    ...(Object.entries(FAILURE_KINDS) as Array<[FailureKind, string]>).map(
      ([kind, meaning]) => `| \`${kind}\` | ${cell(meaning)} |`,
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

/** The properties `properties --base-url` checks through the API. */
export function apiPropertiesTable(): string {
  return [
    "| ID | Property | Through the API | Over |",
    "|---|---|---|---|",
    ...API_PROPERTIES.map(
      (p) =>
        `| ${p.id} | ${cell(p.title)} | ${cell(p.statement)} | ${p.over === "quote" ? "generated amounts (P₁, P₂ per case)" : p.over === "products" ? "every listed product" : "positions of a random wallet and `--wallet`, every kind of product first"} |`,
    ),
  ].join("\n");
}

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
