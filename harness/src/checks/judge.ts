/**
 * How a response check records its verdict on one exchange: relevant or not, a failure of some
 * kind, a note. The runner keeps one judge per response check for the whole run and turns it into
 * the check's result at the end.
 * @module
 */
import type { Exchange } from "../http/client.js";
import type { CheckInputs } from "./context.js";
import type { FailureKind, Level } from "./types.js";

/** One response that broke the rule. */
export interface ResponseFinding {
  readonly kind: FailureKind;
  readonly message: string;
  readonly exchange: Exchange;
}

export class ResponseJudge {
  readonly level: Level;
  readonly inputs: CheckInputs;
  /** Responses the rule applied to. */
  seen = 0;
  readonly findings: ResponseFinding[] = [];
  readonly notes: string[] = [];
  /** Per-check memory across exchanges (e.g. earlier reads of the same position). */
  readonly memory = new Map<string, unknown>();
  #current: Exchange | undefined;

  constructor(level: Level, inputs: CheckInputs) {
    this.level = level;
    this.inputs = inputs;
  }

  get reference(): boolean {
    return this.level === "reference";
  }

  /** Called by the runner before `inspect`. */
  begin(exchange: Exchange): void {
    this.#current = exchange;
  }

  /** The rule applies to this exchange (a check that applied to none is reported as skipped). */
  applies(): void {
    this.seen++;
  }

  /** This exchange breaks the rule. */
  fail(kind: FailureKind, message: string): void {
    if (this.#current === undefined) throw new Error("ResponseJudge.fail outside inspect");
    this.findings.push({ kind, message, exchange: this.#current });
  }

  /** Fails unless `condition` holds. */
  check(condition: unknown, kind: FailureKind, message: string): void {
    if (!condition) this.fail(kind, message);
  }

  note(message: string): void {
    if (!this.notes.includes(message)) this.notes.push(message);
  }
}
