/**
 * The adapter's log, JSON lines with one field order (`time`, `level`, `msg`, `instance`, then the
 * line's own fields): one per request on stdout, its level by outcome (5xx `error`, 4xx `warn`,
 * else `info`), with the route, error code, partner, key id, client address and bytes; one per 5xx
 * cause on stderr with the error's stack, at most once a minute per distinct cause (the next one
 * counts those left out); a line when a store goes down and comes back (store-watch.ts); the
 * server's lifecycle (server-log.ts). Health probes are not logged unless asked for.
 * Never the query string, headers or body, so no API key, signature or event can reach the log; a
 * key pasted into the path is masked too, and a key is named by its id only.
 * @module
 */
import { hostname } from "node:os";
import type { ErrorAnswer } from "@partner-yield/core";
import { looksLikeCredential, redactCredentials } from "@partner-yield/core/adapters";

/** The level of a line: a request's by its status (`levelOf`). */
export type LogLevel = "info" | "warn" | "error";

/**
 * The default instance id: `hostname-pid`, unique among the processes of a host and readable on a
 * dashboard. `partner-yield serve --instance-id` (or `PARTNER_YIELD_INSTANCE_ID`) sets another.
 */
export function defaultInstanceId(): string {
  return `${hostname()}-${process.pid}`;
}

let instance = defaultInstanceId();

/** Names this process in every log line from now on (one process, one instance). */
export function setLogInstance(id: string): void {
  instance = id;
}

/** The instance id every line carries. */
export function logInstance(): string {
  return instance;
}

/**
 * The level of a request's line: `error` for a 5xx (the server failed: a bug, a store down),
 * `warn` for a 4xx (the client's mistake, a refusal, a rate limit), `info` for the rest.
 * @example levelOf(503); // "error"
 * @example levelOf(429); // "warn"
 */
export function levelOf(status: number): LogLevel {
  return status >= 500 ? "error" : status >= 400 ? "warn" : "info";
}

export interface RequestLogEntry {
  /** ISO 8601 time the response finished (or the client went away). */
  readonly time: string;
  /** By status: 5xx `error`, 4xx `warn`, else `info` (`levelOf`). */
  readonly level: LogLevel;
  readonly msg: "request";
  /** The process that answered (`--instance-id`; default `hostname-pid`). */
  readonly instance: string;
  readonly request_id: string;
  readonly method: string;
  /** The path without the query string, secrets masked, at most 256 characters. */
  readonly path: string;
  /** The route that took the request, e.g. `GET /products/{slug}` (`ResponseOutcome.route`); absent when none did (404, 405). */
  readonly route?: string | undefined;
  /** The status of the answer (also when the client went away before it could be delivered; see `aborted`). */
  readonly status: number;
  /** The problem's `error.code` (CONTRACT §6) of a 4xx or 5xx, e.g. `invalid_api_key`, `rate_limited`. */
  readonly code?: string | undefined;
  /** The partner of the key presented, once the key was found (a revoked one too). */
  readonly partner_id?: string | undefined;
  /** The id of the key presented (as `keys list` shows it), never the key; absent for keys without one (fixtures). */
  readonly key_id?: string | undefined;
  /** The client's address as the server accepted the connection. */
  readonly client_address?: string | undefined;
  /** Bytes of the request body: as read, or as declared by Content-Length when it was not read. */
  readonly bytes_in: number;
  /** Bytes of the response body (0 for HEAD and empty answers). */
  readonly bytes_out: number;
  /** Milliseconds from the request's arrival to the end of the response (and of the handler), to 0.1 ms. */
  readonly duration_ms: number;
  /** Present when the client closed the connection before the response was complete. */
  readonly aborted?: true | undefined;
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
 * (a bug), `service_unavailable` for a `503` (a store down, a missing USD price, the in-memory
 * event store full). The stack of a cause is written at most once a minute (`STACK_WINDOW_MS`):
 * the same cause again within the minute writes no line (its request's line says `error` and its
 * code), and the first line after it says how many were left out (`suppressed`).
 */
export interface ErrorLogEntry {
  /** ISO 8601 time the error was caught. */
  readonly time: string;
  readonly level: "error";
  readonly msg: "unexpected_error" | "service_unavailable";
  readonly instance: string;
  /** The `X-Request-Id` of the answer, to find the request in the request log. */
  readonly request_id: string;
  /** The status the request was answered with: 500 or 503. */
  readonly status: 500 | 503;
  /** The answer's `error.code`: `internal_error`, `service_unavailable` or `event_store_full`. */
  readonly code: string;
  readonly error: LoggedError;
  /** Errors of this same cause not logged since its previous line (within its minute). */
  readonly suppressed?: number;
}

/** A store stopped answering, or answers again (store-watch.ts); on stderr, or to the log function. */
export interface StoreLogEntry {
  readonly time: string;
  /** `error` when it goes down, `info` when it is back. */
  readonly level: "error" | "info";
  readonly msg: "store_down" | "store_up";
  readonly instance: string;
  /** The store's name as `/readyz` reports it (`events`, `keys`, `rate_limits`, `prices`, …). */
  readonly store: string;
  /** Why its check failed (store_down), connection passwords masked. */
  readonly error?: string;
  /** How long it was down (store_up), in milliseconds. */
  readonly down_ms?: number;
}

export type LogEntry = RequestLogEntry | ErrorLogEntry | StoreLogEntry;

/**
 * Where log lines go: `"json"` (requests on stdout, errors and store lines on stderr), `"none"`,
 * or your own function, which receives every kind (tell them apart by `msg`).
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

/** A cause's stack is logged at most once in this many milliseconds. */
export const STACK_WINDOW_MS = 60_000;
/** Distinct causes remembered at once; past it, the ones whose window ended are forgotten. */
const MAX_CAUSES = 1000;

/**
 * The function behind a `RequestLogOption` for 5xx answers (the core's `onError`), or undefined
 * when logging is off. Without an `answer` the error was a 500. Each distinct cause (error name,
 * message, first stack frame, and its cause's name and message, digits aside) is logged once a
 * minute; `onStoreError`, when given, hears every `StoreUnavailableError` (the store watch).
 * @example createPartnerApi({ …, onError: resolveErrorLog("json") }); // a 500 or 503 prints {"level":"error",…} on stderr
 */
export function resolveErrorLog(
  option: RequestLogOption | undefined,
  onStoreError?: ((error: Error) => void) | undefined,
  now: () => number = Date.now,
): ((error: unknown, requestId: string, answer?: ErrorAnswer) => void) | undefined {
  if (option === "none") return onStoreError === undefined ? undefined : (error) => storeError(error);
  const sink = option === undefined || option === "json" ? writeStderr : option;
  const causes = new Map<string, { until: number; suppressed: number }>();
  function storeError(error: unknown): void {
    if (onStoreError !== undefined && error instanceof Error && error.name === "StoreUnavailableError") {
      try {
        onStoreError(error);
      } catch {
        // The watch must not turn a 503 into a 500.
      }
    }
  }
  return (error, requestId, answer) => {
    storeError(error);
    const key = causeKey(error);
    const at = now();
    const seen = causes.get(key);
    if (seen !== undefined && at < seen.until) {
      seen.suppressed++;
      return;
    }
    if (causes.size >= MAX_CAUSES) {
      for (const [k, v] of causes) if (at >= v.until) causes.delete(k);
      if (causes.size >= MAX_CAUSES) causes.clear();
    }
    causes.set(key, { until: at + STACK_WINDOW_MS, suppressed: 0 });
    sink(errorLogEntry(error, requestId, answer, seen?.suppressed ?? 0));
  };
}

/**
 * What makes two errors the same cause: name, message, where it was thrown (the stack's first
 * frame) and its cause's name and message, with digits left out (ports, ids, counts and line
 * numbers vary between occurrences of one cause).
 */
export function causeKey(error: unknown): string {
  if (!(error instanceof Error)) return `${typeof error}`;
  const stack = typeof error.stack === "string" ? error.stack : "";
  const at = stack.indexOf("\n    at ");
  const end = at < 0 ? -1 : stack.indexOf("\n", at + 1);
  const frame = at < 0 ? "" : stack.slice(at + 1, end < 0 ? undefined : end);
  const cause = error.cause instanceof Error ? `${error.cause.name}: ${error.cause.message}` : "";
  return `${error.name}: ${error.message}\u0000${frame}\u0000${cause}`.replace(/[0-9]+/g, "#");
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
  suppressed = 0,
): ErrorLogEntry {
  const entry: ErrorLogEntry = {
    time: new Date().toISOString(),
    level: "error",
    msg: answer.status === 503 ? "service_unavailable" : "unexpected_error",
    instance,
    request_id: requestId,
    status: answer.status,
    code: answer.code,
    error: describeError(error),
  };
  return suppressed > 0 ? { ...entry, suppressed } : entry;
}

/**
 * A store's line (store-watch.ts), to the sink of `option`.
 * @example storeLogEntry("store_up", "events", { down_ms: 5200 }); // { time, level: "info", msg: "store_up", instance, store: "events", down_ms: 5200 }
 */
export function storeLogEntry(
  msg: StoreLogEntry["msg"],
  store: string,
  detail: { readonly error?: string; readonly down_ms?: number },
): StoreLogEntry {
  return {
    time: new Date().toISOString(),
    level: msg === "store_down" ? "error" : "info",
    msg,
    instance,
    store,
    ...detail,
  };
}

/** The function that writes store lines for `option` (stderr for `"json"`), or undefined for `"none"`. */
export function resolveStoreLog(
  option: RequestLogOption | undefined,
): ((entry: StoreLogEntry) => void) | undefined {
  if (option === "none") return undefined;
  return option === undefined || option === "json" ? writeStderr : option;
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
 * @example requestLine({ time: "2026-11-23T12:10:54.139Z", level: "info", msg: "request", instance: "web-1-4242", request_id: "req_1", method: "GET", path: "/api/partner/products", route: "GET /products", status: 200, bytes_in: 0, bytes_out: 1234, duration_ms: 0.9 }); // '{"time":"2026-11-23T12:10:54.139Z",…,"duration_ms":0.9}\n'
 */
export function requestLine(entry: RequestLogEntry): string {
  const route = entry.route === undefined ? "" : `,"route":${jsonString(entry.route)}`;
  const code = entry.code === undefined ? "" : `,"code":${jsonString(entry.code)}`;
  const partner = entry.partner_id === undefined ? "" : `,"partner_id":${jsonString(entry.partner_id)}`;
  const key = entry.key_id === undefined ? "" : `,"key_id":${jsonString(entry.key_id)}`;
  const client =
    entry.client_address === undefined ? "" : `,"client_address":${jsonString(entry.client_address)}`;
  const aborted = entry.aborted === true ? ',"aborted":true' : "";
  return `{"time":${jsonString(entry.time)},"level":${jsonString(entry.level)},"msg":"request","instance":${jsonString(entry.instance)},"request_id":${jsonString(entry.request_id)},"method":${jsonString(entry.method)},"path":${jsonString(entry.path)}${route},"status":${jsonNumber(entry.status)}${code}${partner}${key}${client},"bytes_in":${jsonNumber(entry.bytes_in)},"bytes_out":${jsonNumber(entry.bytes_out)},"duration_ms":${jsonNumber(entry.duration_ms)}${aborted}}\n`;
}

function writeStderr(entry: LogEntry): void {
  process.stderr.write(`${JSON.stringify(entry)}\n`);
}
