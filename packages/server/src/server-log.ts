/**
 * The server's own lines on stderr (`partner-yield serve`): starting facts, warnings, listening,
 * shutting down, stopped, a connection lost. JSON with the request log's field order (`time`,
 * `level`, `msg`, `instance`, then the line's own fields), so stderr holds JSON lines only from
 * the first one on: a log collector parses every line, an operator greps `msg`.
 * @module
 */
import { type LogLevel, logInstance } from "@partner-yield/node-adapter";

/** A lifecycle line: the common fields, then its own (never a secret: URLs are given redacted). */
export interface ServerLogEntry {
  readonly time: string;
  readonly level: LogLevel;
  /** e.g. `starting`, `warning`, `listening`, `shutting_down`, `stopped`, `connection_error`, `cannot_start`. */
  readonly msg: string;
  readonly instance: string;
  readonly [field: string]: unknown;
}

let written = false;

/**
 * The line of a lifecycle event, `fields` after the common ones in their order.
 * @example serverLogEntry("info", "listening", { url: "http://127.0.0.1:8787" }); // { time, level: "info", msg: "listening", instance, url }
 */
export function serverLogEntry(
  level: LogLevel,
  msg: string,
  fields: Readonly<Record<string, unknown>> = {},
): ServerLogEntry {
  return { time: new Date().toISOString(), level, msg, instance: logInstance(), ...fields };
}

/** Writes a lifecycle line on stderr. */
export function writeServerLog(
  level: LogLevel,
  msg: string,
  fields?: Readonly<Record<string, unknown>>,
): void {
  written = true;
  process.stderr.write(`${JSON.stringify(serverLogEntry(level, msg, fields))}\n`);
}

/** Whether a lifecycle line was written: from then on stderr must stay JSON (cli.ts `fail`). */
export function serverLogStarted(): boolean {
  return written;
}
