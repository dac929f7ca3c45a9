/**
 * Checks that compare many figures count every wrong one, not only the first: the message says
 * how many were wrong in how many answers, lists the first few, and shows a few answers as evidence.
 * @module
 */
import type { Exchange } from "../http/client.js";
import type { CheckContext } from "./context.js";

/** One wrong figure: its line in the message (wire names) and the answer that holds it. */
export interface WrongFigure {
  readonly line: string;
  readonly ex: Exchange;
}

/** Lines listed in the message; the rest are counted. */
export const WRONG_SHOWN = 8;
/** Answers shown as evidence, at most. */
const EVIDENCE_SHOWN = 3;

/**
 * Fails `t` when `wrong` holds anything: `5 wrong figures in 3 of 8 quotes:` and the lines.
 * @example failOnWrong(t, wrong, 8, "quotes");
 */
export function failOnWrong(
  t: CheckContext,
  wrong: readonly WrongFigure[],
  answers: number,
  noun: string,
  /** How the expected figures were computed, as a last line. */
  rule?: string,
): void {
  if (wrong.length === 0) return;
  const holding = [...new Set(wrong.map((w) => w.ex))];
  const shown = wrong.slice(0, WRONG_SHOWN).map((w) => w.line);
  t.fail(
    [
      `${wrong.length} wrong figure${wrong.length === 1 ? "" : "s"} in ${holding.length} of ${answers} ${noun}:`,
      ...shown,
      ...(wrong.length > shown.length ? [`… and ${wrong.length - shown.length} more`] : []),
      ...(rule === undefined ? [] : [`(${rule})`]),
    ].join("\n"),
    ...holding.slice(0, EVIDENCE_SHOWN),
  );
}
