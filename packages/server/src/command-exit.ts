/**
 * What the database commands (`db`, `events`, `audit`) share: their exit statuses, how a message
 * reaches stderr, and how a failure of the database becomes a status and a message.
 * @module
 */

import { StoreUnavailableError } from "@partner-yield/core";
import { escapeUnsafe } from "@partner-yield/core/adapters";
import { redactConnectionText } from "./redact-url.js";

export const EXIT_OK = 0;
/** The database cannot be reached, or the command failed there. */
export const EXIT_FAILURE = 1;
/** A bad command line. */
export const EXIT_USAGE = 2;
/** The schema is not the one this release runs on. */
export const EXIT_SCHEMA = 3;

/**
 * Writes `partner-yield: MESSAGE` to `write` with the credentials of `urls()` masked and unsafe
 * characters escaped (a message may quote what was typed), and returns `code`.
 */
export function failureReporter(
  write: (text: string) => void,
  urls: () => readonly string[],
): (code: number, message: string) => number {
  return (code, message) => {
    write(`partner-yield: ${escapeUnsafe(redactConnectionText(message, urls()), { keepNewlines: true })}\n`);
    return code;
  };
}

/** The exit status and message of `command` failing with `error` against the database. */
export function databaseFailure(error: unknown, command: string): { code: number; message: string } {
  const message = (error as Error).message;
  if ((error as Error).name === "SchemaVersionError") return { code: EXIT_SCHEMA, message };
  if ((error as Error).name === "SecretKeyError" || error instanceof StoreUnavailableError)
    return { code: EXIT_FAILURE, message };
  return { code: EXIT_FAILURE, message: `${command} failed: ${message}` };
}
