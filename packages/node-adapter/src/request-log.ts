/**
 * The adapter's log: one JSON line per request (method, path, status, duration, request id) on
 * stdout, and one per 5xx answer with its cause (request id, status, error name, message, stack
 * and cause) on stderr: a bug (500) and a store down or a missing price (503) alike.
 * Never the query string, headers or body, so no API key, signature or event can reach the log; a
 * key pasted into the path is masked too.
 * @module
 */
import { type ErrorAnswer, looksLikeCredential, redactCredentials } from "@partner-yield/core";

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

/** An error as logged: what it is and where it came from, nothing of the request. */
export interface LoggedError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  /** The error's `cause` (e.g. the driver's error behind a `StoreUnavailableError`), one level deep. */
  readonly cause?: { readonly name: string; readonly message: string };
}

/**
 * Why a request was answered with a 5xx (CONTRACT §6): `unexpected_error` for a `500 internal_error`
 * (a bug), `service_unavailable` for a `503` (a store down, a missing USD price).
 */
export interface ErrorLogEntry {
  /** ISO 8601 time the error was caught. */
  readonly time: string;
  readonly level: "error";
  readonly msg: "unexpected_error" | "service_unavailable";
  /** The `X-Request-Id` of the answer, to find the request in the request log. */
  readonly request_id: string;
  /** The status the request was answered with: 500 or 503. */
  readonly status: 500 | 503;
  readonly error: LoggedError;
}

export type LogEntry = RequestLogEntry | ErrorLogEntry;

/**
 * Where log lines go: `"json"` (requests on stdout, errors on stderr), `"none"`, or your own
 * function, which receives both kinds (tell them apart by `msg`).
 */
export type RequestLogOption = "json" | "none" | ((entry: LogEntry) => void);

const MAX_PATH = 256;

/**
 * The path as it may be logged: no query string, API keys and signing secrets masked, truncated.
 * @example logPath("/api/partner/products/ypk_test_abc"); // "/api/partner/products/ypk_test_[redacted]"
 */
export function logPath(path: string): string {
  let out = path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path;
  if (out.includes("%")) out = maskEncodedSecrets(out);
  return redactCredentials(out);
}

/**
 * A path whose percent-decoded form holds a key or secret (`ypk%5Ftest%5F…`) is logged decoded,
 * so the mask applies; any other path is logged as sent.
 */
function maskEncodedSecrets(path: string): string {
  const decoded = path.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
  return looksLikeCredential(decoded) ? decoded : path;
}

/**
 * The function behind a `RequestLogOption` for request lines, or undefined when logging is off.
 * @example resolveRequestLog("json")?.(entry); // prints {"time":…,"msg":"request",…}
 */
export function resolveRequestLog(
  option: RequestLogOption | undefined,
): ((entry: RequestLogEntry) => void) | undefined {
  if (option === "none") return undefined;
  if (option === undefined || option === "json") return writeStdout;
  return option;
}

/**
 * The function behind a `RequestLogOption` for 5xx answers (the core's `onError`), or undefined
 * when logging is off. Without an `answer` the error was a 500.
 * @example createPartnerApi({ …, onError: resolveErrorLog("json") }); // a 500 or 503 prints {"level":"error",…} on stderr
 */
export function resolveErrorLog(
  option: RequestLogOption | undefined,
): ((error: unknown, requestId: string, answer?: ErrorAnswer) => void) | undefined {
  if (option === "none") return undefined;
  const sink = option === undefined || option === "json" ? writeStderr : option;
  return (error, requestId, answer) => sink(errorLogEntry(error, requestId, answer));
}

/**
 * The log line of a 5xx: the error's name, message, stack and cause, nothing of the request.
 * @example errorLogEntry(new TypeError("x is undefined"), "req_…").error; // { name: "TypeError", message: "x is undefined", stack: "TypeError: …" }
 * @example errorLogEntry(new StoreUnavailableError("no USD price for USDC", 60), "req_…", { status: 503, code: "service_unavailable" }).msg; // "service_unavailable"
 */
export function errorLogEntry(
  error: unknown,
  requestId: string,
  answer: ErrorAnswer = { status: 500, code: "internal_error" },
): ErrorLogEntry {
  return {
    time: new Date().toISOString(),
    level: "error",
    msg: answer.status === 503 ? "service_unavailable" : "unexpected_error",
    request_id: requestId,
    status: answer.status,
    error: describeError(error),
  };
}

function describeError(error: unknown): LoggedError {
  if (!(error instanceof Error)) return { name: typeof error, message: safeString(error) };
  const cause = error.cause;
  return {
    name: error.name,
    message: error.message,
    ...(typeof error.stack === "string" ? { stack: error.stack } : {}),
    ...(cause === undefined
      ? {}
      : {
          cause:
            cause instanceof Error
              ? { name: cause.name, message: cause.message }
              : { name: typeof cause, message: safeString(cause) },
        }),
  };
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "(unprintable)";
  }
}

/**
 * Request lines wait here, then go out in one write every 10 ms (or as soon as 64 KiB wait):
 * under load that is one write for hundreds of requests instead of one each (stdout is written
 * synchronously for files and pipes on Linux). Flushed as well by `flushRequestLog()` (the
 * server's `close()`) and when the process exits, so no line is lost on a shutdown, a
 * `process.exit()` or an uncaught exception; a kill -9 loses at most the last 10 ms of lines.
 */
let pending = "";
let flushTimer: ReturnType<typeof setTimeout> | undefined;
let exitHooked = false;
const FLUSH_AT = 65_536;
const FLUSH_EVERY_MS = 10;

/** Writes the request lines waiting in the buffer now. */
export function flushRequestLog(): void {
  if (flushTimer !== undefined) {
    clearTimeout(flushTimer);
    flushTimer = undefined;
  }
  if (pending === "") return;
  const out = pending;
  pending = "";
  process.stdout.write(out);
}

function writeStdout(entry: RequestLogEntry): void {
  pending += requestLine(entry);
  if (pending.length >= FLUSH_AT) {
    flushRequestLog();
    return;
  }
  if (!exitHooked) {
    exitHooked = true;
    process.on("exit", flushRequestLog);
  }
  if (flushTimer === undefined) {
    flushTimer = setTimeout(flushRequestLog, FLUSH_EVERY_MS);
    // The exit hook writes what waits; the timer alone must not keep a stopping process alive.
    flushTimer.unref();
  }
}

/** Printable ASCII without `"` and `\\`: JSON writes such a string as it is, between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function jsonString(value: string): string {
  return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
}

function jsonNumber(value: number): string {
  return Number.isFinite(value) ? `${value}` : "null";
}

/**
 * A request line exactly as `JSON.stringify(entry)` writes it (same keys, same order, same
 * escapes), built without walking the object: the log costs less per request.
 * @example requestLine({ time: "2026-11-23T12:10:54.139Z", level: "info", msg: "request", request_id: "req_1", method: "GET", path: "/healthz", status: 200, duration_ms: 0.9 }); // '{"time":"2026-11-23T12:10:54.139Z",…,"duration_ms":0.9}\n'
 */
export function requestLine(entry: RequestLogEntry): string {
  const aborted = entry.aborted === true ? ',"aborted":true' : "";
  return `{"time":${jsonString(entry.time)},"level":"info","msg":"request","request_id":${jsonString(entry.request_id)},"method":${jsonString(entry.method)},"path":${jsonString(entry.path)},"status":${jsonNumber(entry.status)},"duration_ms":${jsonNumber(entry.duration_ms)}${aborted}}\n`;
}

function writeStderr(entry: LogEntry): void {
  process.stderr.write(`${JSON.stringify(entry)}\n`);
}
