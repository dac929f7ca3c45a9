/**
 * One JSON line per request (method, path, status, duration, request id). Never the query string,
 * headers or body, so no API key, signature or event can reach the log; a key pasted into the path
 * is masked too.
 * @module
 */

export interface RequestLogEntry {
  /** ISO 8601 time the response finished (or the client went away). */
  readonly time: string;
  readonly level: "info";
  readonly msg: "request";
  readonly request_id: string;
  readonly method: string;
  /** The path without the query string, secrets masked, at most 256 characters. */
  readonly path: string;
  /** The status of the answer (also when the client went away before it could be delivered; see `aborted`). */
  readonly status: number;
  /** Milliseconds from the request's arrival to the end of the response (and of the handler), to 0.1 ms. */
  readonly duration_ms: number;
  /** Present when the client closed the connection before the response was complete. */
  readonly aborted?: true;
}

/** Where request log lines go: `"json"` (stdout), `"none"`, or your own function. */
export type RequestLogOption = "json" | "none" | ((entry: RequestLogEntry) => void);

const MAX_PATH = 256;
const SECRET = /(ypk_(?:test|live)_|whsec_)[A-Za-z0-9_-]*/g;

/**
 * The path as it may be logged: no query string, API keys and signing secrets masked, truncated.
 * @example logPath("/api/partner/products/ypk_test_abc"); // "/api/partner/products/ypk_test_[redacted]"
 */
export function logPath(path: string): string {
  let out = path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path;
  if (out.includes("ypk_") || out.includes("whsec_")) out = out.replace(SECRET, "$1[redacted]");
  return out;
}

/**
 * The function behind a `RequestLogOption`, or undefined when logging is off.
 * @example resolveRequestLog("json")?.(entry); // prints {"time":…,"msg":"request",…}
 */
export function resolveRequestLog(
  option: RequestLogOption | undefined,
): ((entry: RequestLogEntry) => void) | undefined {
  if (option === "none") return undefined;
  if (option === undefined || option === "json") return writeJsonLine;
  return option;
}

function writeJsonLine(entry: RequestLogEntry): void {
  process.stdout.write(`${JSON.stringify(entry)}\n`);
}
