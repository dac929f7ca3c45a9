/**
 * The console report: one line per check as it finishes (✔ passed, ✖ failed, ⚠ warning, ○
 * skipped), the evidence and a redacted curl command under each failure or warning, and a summary
 * with the seed and the requests spent. A progress line on stderr while a check runs, only when
 * stderr is a terminal.
 * @module
 */
import type { CheckDefinition } from "../checks/definition.js";
import type { CheckResult } from "../checks/types.js";
import type { Redactor } from "../redact.js";
import type { Plan, RunReport, RunSettings } from "../runner.js";

export interface TextStream {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
}

interface Style {
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const plain: Style = { green: (s) => s, red: (s) => s, yellow: (s) => s, dim: (s) => s, bold: (s) => s };
const ansi: Style = {
  green: (s) => `\x1b[32m${s}\x1b[39m`,
  red: (s) => `\x1b[31m${s}\x1b[39m`,
  yellow: (s) => `\x1b[33m${s}\x1b[39m`,
  dim: (s) => `\x1b[2m${s}\x1b[22m`,
  bold: (s) => `\x1b[1m${s}\x1b[22m`,
};

/** Colours only on a terminal, and never when NO_COLOR is set (no-color.org). */
export function styleFor(stream: TextStream, env: NodeJS.ProcessEnv = process.env): Style {
  return stream.isTTY === true && env["NO_COLOR"] === undefined ? ansi : plain;
}

/** The status line on stderr: `[12/66] EVT-03 · 45 requests`. Silent unless stderr is a terminal. */
export class ProgressLine {
  readonly #stream: TextStream;
  readonly #enabled: boolean;
  #text = "";

  constructor(stream: TextStream, enabled = stream.isTTY === true) {
    this.#stream = stream;
    this.#enabled = enabled;
  }

  update(text: string): void {
    if (!this.#enabled) return;
    this.#text = text;
    this.#stream.write(`\r\x1b[K${text}`);
  }

  clear(): void {
    if (!this.#enabled || this.#text === "") return;
    this.#text = "";
    this.#stream.write("\r\x1b[K");
  }
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => prefix + line)
    .join("\n");
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 100) / 10;
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export class ConsoleReporter {
  readonly #out: TextStream;
  readonly #progress: ProgressLine;
  readonly #style: Style;
  readonly #redactor: Redactor;
  #spent = 0;
  #current = "";

  constructor(out: TextStream, err: TextStream, redactor: Redactor) {
    this.#out = out;
    this.#progress = new ProgressLine(err);
    this.#style = styleFor(out);
    this.#redactor = redactor;
  }

  #print(text: string): void {
    this.#progress.clear();
    this.#out.write(`${this.#redactor.redact(text)}\n`);
  }

  plan(plan: Plan, settings: RunSettings, version: string): void {
    const s = this.#style;
    const target = settings.embedded ? `${settings.baseUrl} (embedded sandbox server)` : settings.baseUrl;
    this.#print(s.bold(`partner-yield-conformance ${version} → ${target}`));
    const runnable = plan.checks.filter((c) => c.skipReason === undefined).length;
    this.#print(
      s.dim(
        `level ${settings.level} · seed ${settings.seed} · ${plan.checks.length} checks (${runnable} runnable) · ` +
          `at most ${plan.requests} requests · throttle ${settings.rpm}/min, burst ${settings.burst}`,
      ),
    );
    if (plan.excludedByLevel > 0) {
      this.#print(s.dim(`${plan.excludedByLevel} reference-level checks are not run at level spec`));
    }
    if (plan.preflight > 0) {
      this.#print(
        s.dim("the signing secret is checked first: one signed event, and one signed with a wrong secret"),
      );
    }
    this.#print("");
  }

  checkStarted(check: CheckDefinition, index: number, total: number): void {
    this.#current = `[${index + 1}/${total}] ${check.id}`;
    this.#progress.update(`${this.#current} · ${this.#spent} requests`);
  }

  requestSent(spent: number): void {
    this.#spent = spent;
    this.#progress.update(`${this.#current} · ${spent} requests`);
  }

  pause(ms: number, why: string): void {
    this.#progress.update(`${this.#current} · waiting ${Math.ceil(ms / 1000)} s: ${why}`);
  }

  backoff(ms: number): void {
    this.#progress.update(`${this.#current} · 429: waiting ${Math.ceil(ms / 1000)} s (Retry-After)`);
  }

  result(result: CheckResult): void {
    const s = this.#style;
    const head = `${result.id.padEnd(7)} ${result.title}`;
    if (result.status === "passed") {
      this.#print(`${s.green("✔")} ${head}`);
    } else if (result.status === "skipped") {
      this.#print(`${s.dim("○")} ${head} ${s.dim(`— skipped: ${result.message ?? ""}`)}`);
    } else {
      const failed = result.status === "failed";
      const mark = failed ? s.red("✖") : s.yellow("⚠");
      this.#print(`${mark} ${head}${failed ? s.dim(` [${result.failureKind}]`) : s.dim(" [warning]")}`);
      this.#print(indent(result.message ?? "", "    "));
      for (const evidence of result.evidence) {
        this.#print(s.dim(indent(`→ ${evidence.request}`, "    ")));
        this.#print(s.dim(indent(`← ${evidence.response}`, "    ")));
        this.#print(`    reproduce:\n${indent(evidence.curl, "      ")}`);
      }
    }
    for (const note of result.notes) this.#print(`    ${s.dim(`· ${note}`)}`);
  }

  summary(report: RunReport, rerun: string | undefined): void {
    const s = this.#style;
    const { passed, failed, warned, skipped, notes } = report.summary;
    this.#print("");
    const counts = [
      s.green(`${passed} passed`),
      failed > 0 ? s.red(`${failed} failed`) : `${failed} failed`,
      warned > 0 ? s.yellow(plural(warned, "warning")) : plural(warned, "warning"),
      `${skipped} skipped`,
    ].join(", ");
    this.#print(`${counts} · ${plural(notes, "note")} · level ${report.level}`);
    this.#print(
      `${report.requests} requests spent (plan allowed ${report.plannedRequests}) · ${duration(report.durationMs)} · ` +
        `throttle waited ${duration(report.throttle.waitedMs)} · seed ${report.seed}`,
    );
    if (rerun !== undefined) this.#print(s.dim(`rerun the checks that failed or warned: ${rerun}`));
  }
}
