/**
 * JUnit XML of `properties --base-url`: one testsuite, one testcase per property; a failure is a
 * `<failure>`, an inconclusive property an `<error type="inconclusive">` (never a skip, never a
 * pass); each testcase's system-out holds its coverage record.
 * @module
 */
import type { Redactor } from "../redact.js";
import type { ApiPropertyReport, ApiPropertyResult } from "./api-run.js";

function xml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");
}

/** The coverage record of a result as lines (`products: status active 4, …`). */
export function coverageLines(result: ApiPropertyResult): string[] {
  const c = result.coverage;
  if (c === undefined) return [];
  const tally = (t: Readonly<Record<string, number>>) =>
    Object.entries(t)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "none";
  return [
    `products: ${tally(c.products)}`,
    ...(c.amounts === undefined ? [] : [`amounts: ${tally(c.amounts)}`]),
    ...(c.wallets === undefined ? [] : [`wallets: ${tally(c.wallets)}`]),
    ...(c.missing.length === 0 ? [] : [`short of --min-runs: ${c.missing.join(", ")}`]),
  ];
}

export function propertiesJUnit(report: ApiPropertyReport, redactor: Redactor): string {
  const cases = report.results.map((r) => {
    const out = [`runs ${r.runs}, discarded ${r.discarded}, requests ${r.requests}`, ...coverageLines(r)];
    const message = redactor.redact(r.error ?? "");
    const detail = redactor.redact(
      [r.counterexample === undefined ? "" : `counterexample: ${r.counterexample}`, ...(r.reproduce ?? [])]
        .filter((x) => x !== "")
        .join("\n"),
    );
    const verdict =
      r.status === "failed"
        ? `<failure message="${xml(message)}" type="property">${xml(detail)}</failure>`
        : r.status === "inconclusive"
          ? `<error message="${xml(message)}" type="inconclusive">${xml(message)}</error>`
          : "";
    return `    <testcase classname="properties" name="${xml(`${r.id} ${r.title}`)}">${verdict}<system-out>${xml(out.join("\n"))}</system-out></testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="partner-yield-conformance properties" tests="${report.results.length}" failures="${report.failed}" errors="${report.inconclusive}">`,
    `  <testsuite name="properties" tests="${report.results.length}" failures="${report.failed}" errors="${report.inconclusive}" skipped="0">`,
    `    <properties><property name="seed" value="${report.seed}"/><property name="baseUrl" value="${xml(report.baseUrl)}"/><property name="minRuns" value="${report.minRuns}"/></properties>`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
