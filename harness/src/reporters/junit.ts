/**
 * JUnit XML, the format every CI server and test viewer reads: one `<testsuite>` per category,
 * one `<testcase>` per check, `<failure>` with the evidence and the curl command, `<skipped>` with
 * the reason, a warning as a `status` property of `warning` with its evidence on `<system-err>`
 * (neither a skip nor a failure). The seed and the count of warnings are properties of every suite.
 * @module
 */
import { type CheckResult, FAILURE_KINDS } from "../checks/types.js";
import type { Redactor } from "../redact.js";
import type { RunReport } from "../runner.js";

/** Characters XML 1.0 cannot hold at all, even escaped. */
const INVALID_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Escapes text for an XML attribute or element, dropping characters XML cannot carry. */
export function xmlEscape(text: string): string {
  return text
    .replace(INVALID_XML, "\uFFFD")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&apos;");
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "unknown";
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function failureText(result: CheckResult): string {
  const parts = [result.message ?? ""];
  for (const evidence of result.evidence) {
    parts.push(
      "",
      "request:",
      evidence.request,
      "",
      "response:",
      evidence.response,
      "",
      "reproduce:",
      evidence.curl,
    );
  }
  return parts.join("\n");
}

function testcase(result: CheckResult, indent: string): string {
  const name = xmlEscape(`${result.id} ${result.title}`);
  const classname = xmlEscape(`partner-yield-conformance.${result.category}`);
  const open = `${indent}<testcase classname="${classname}" name="${name}" time="${seconds(result.durationMs)}"`;
  const children: string[] = [];
  if (result.status === "failed") {
    // `type` is the failure kind (FAILURE_KINDS), so CI dashboards can group failures by it.
    const kind = result.failureKind ?? "check_error";
    children.push(
      `${indent}  <failure message="${xmlEscape(result.message ?? "failed")}" type="${xmlEscape(kind)}">${xmlEscape(`${kind}: ${FAILURE_KINDS[kind]}\n\n${failureText(result)}`)}</failure>`,
    );
  } else if (result.status === "warning") {
    // JUnit has no "warning", and a skip says the check did not run: a warned check ran, so it is
    // marked apart, by a status property and its message and evidence on system-err.
    children.push(
      `${indent}  <properties>`,
      `${indent}    <property name="status" value="warning"/>`,
      `${indent}    <property name="warning" value="${xmlEscape(result.message ?? "")}"/>`,
      `${indent}  </properties>`,
      `${indent}  <system-err>${xmlEscape(`warning: ${failureText(result)}`)}</system-err>`,
    );
  } else if (result.status === "skipped") {
    children.push(`${indent}  <skipped message="${xmlEscape(result.message ?? "skipped")}"/>`);
  }
  const out = [
    `kind: ${result.kind}`,
    `level: ${result.level}`,
    `source: ${result.source}`,
    `requests: ${result.requests}`,
    ...result.notes.map((w) => `note: ${w}`),
  ];
  children.push(`${indent}  <system-out>${xmlEscape(out.join("\n"))}</system-out>`);
  return `${open}>\n${children.join("\n")}\n${indent}</testcase>`;
}

/** The JUnit document for a run, every string redacted. */
export function toJUnit(report: RunReport, redactor: Redactor): string {
  const byCategory = new Map<string, CheckResult[]>();
  for (const result of report.results) {
    byCategory.set(result.category, [...(byCategory.get(result.category) ?? []), result]);
  }
  const properties = [
    ["seed", String(report.seed)],
    ["level", report.level],
    ["base_url", report.baseUrl],
    ["embedded", String(report.embedded)],
    ["requests", String(report.requests)],
    ["version", report.version],
  ]
    .map(([name, value]) => `      <property name="${xmlEscape(name!)}" value="${xmlEscape(value!)}"/>`)
    .join("\n");
  const suites = [...byCategory.entries()].map(([category, results]) => {
    const failures = results.filter((r) => r.status === "failed").length;
    const skipped = results.filter((r) => r.status === "skipped").length;
    const warned = results.filter((r) => r.status === "warning").length;
    const time = results.reduce((n, r) => n + r.durationMs, 0);
    return [
      `  <testsuite name="conformance.${xmlEscape(category)}" tests="${results.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds(time)}" timestamp="${xmlEscape(report.startedAt.replace(/\.\d+Z$/, ""))}" hostname="${xmlEscape(hostOf(report.baseUrl))}">`,
      "    <properties>",
      properties,
      `      <property name="warnings" value="${warned}"/>`,
      "    </properties>",
      ...results.map((r) => testcase(r, "    ")),
      "  </testsuite>",
    ].join("\n");
  });
  const { passed, failed, warned, skipped } = report.summary;
  const xml = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="partner-yield-conformance (${report.level}, seed ${report.seed})" tests="${passed + failed + warned + skipped}" failures="${failed}" errors="0" skipped="${skipped}" time="${seconds(report.durationMs)}">`,
    ...suites,
    "</testsuites>",
    "",
  ].join("\n");
  return redactor.redact(xml);
}
