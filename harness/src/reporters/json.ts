/**
 * The JSON report: the whole run as data, for dashboards and diffs between runs.
 * @module
 */
import type { Redactor } from "../redact.js";
import type { RunReport } from "../runner.js";

/** The report as pretty JSON, every string redacted. */
export function toJson(report: RunReport, redactor: Redactor): string {
  return `${JSON.stringify(redactor.redactDeep(report), null, 2)}\n`;
}
