/**
 * The one way checks talk to a target: every request goes through the token bucket, is counted
 * and recorded (the evidence of a failure and the source of its curl command). GET and HEAD
 * requests refused with 429 are retried after `Retry-After`; a POST is never retried.
 * @module
 */
import { Readable } from "node:stream";
import { Agent } from "undici";
import type { TokenBucket } from "../throttle.js";

export interface RequestSpec {
  readonly method: string;
  /** Path and query, percent-encoded where needed, relative to the base URL: `/api/partner/products`. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** Skip the token bucket and never retry: the rate-limit probe only. */
  readonly unthrottled?: boolean;
  /**
   * A body streamed chunk by chunk without Content-Length (Transfer-Encoding: chunked); the
   * iterable is told whether the response has arrived, to stop early. Never retried.
   */
  readonly stream?: (answered: () => boolean) => AsyncIterable<Uint8Array>;
}

/** What a streamed body did: bytes sent, and whether all of it went before the response came. */
export interface StreamRecord {
  readonly bytes: number;
  readonly finishedBeforeAnswer: boolean;
}

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | undefined;
}

export interface RecordedResponse {
  readonly status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
  /** Set when the body could not be read to its end (the connection reset after the headers). */
  readonly cut?: string;
}

/** One request and what came back (or the transport error that stopped it). */
export interface Exchange {
  readonly seq: number;
  readonly checkId: string;
  readonly request: RecordedRequest;
  readonly response: RecordedResponse | undefined;
  readonly error: string | undefined;
  /** Requests spent on it: 1, more when a 429 was retried. */
  readonly attempts: number;
  /** Set for a streamed body. */
  readonly stream?: StreamRecord;
  readonly durationMs: number;
}

export interface HttpClientOptions {
  /** Where the deployment is mounted: its origin, and a path prefix when it has one (`https://host/yield/v1`). */
  readonly baseUrl: string;
  /**
   * The API's own base path under `baseUrl` (core's `basePath`); by default `defaultApiBasePath`:
   * `/api/partner` under a server root, `""` under a URL with a path. Checks write paths as
   * `/api/partner/…`; that prefix is replaced by this one.
   */
  readonly apiBasePath?: string;
  readonly bucket: TokenBucket;
  readonly timeoutMs?: number;
  /** Longest `Retry-After` a GET waits for before giving up and returning the 429. Default 65 s. */
  readonly maxRetryWaitMs?: number;
  /** Retries of one GET after 429s. Default 2. */
  readonly maxRetries?: number;
  /** Told about every request about to be sent (the progress line). */
  readonly onSend?: (spent: number) => void;
  /** Told when the client waits on a 429's Retry-After. */
  readonly onBackoff?: (ms: number) => void;
  /** Told about every exchange as it is recorded (the response checks judge it there). */
  readonly onRecord?: (exchange: Exchange) => void;
}

export class HttpClient {
  readonly baseUrl: string;
  /** The API's own base path under `baseUrl`, as given or by default (`defaultApiBasePath`). */
  readonly apiBasePath: string;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #bucket: TokenBucket;
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  readonly #maxRetryWaitMs: number;
  readonly #maxRetries: number;
  readonly #onSend: ((spent: number) => void) | undefined;
  readonly #onBackoff: ((ms: number) => void) | undefined;
  readonly #onRecord: ((exchange: Exchange) => void) | undefined;
  readonly #exchanges: Exchange[] = [];
  #spent = 0;

  constructor(options: HttpClientOptions) {
    const url = new URL(options.baseUrl);
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, "");
    this.apiBasePath = options.apiBasePath ?? defaultApiBasePath(options.baseUrl);
    this.#bucket = options.bucket;
    this.#timeoutMs = options.timeoutMs ?? 15_000;
    this.#maxRetryWaitMs = options.maxRetryWaitMs ?? 65_000;
    this.#maxRetries = options.maxRetries ?? 2;
    this.#onSend = options.onSend;
    this.#onBackoff = options.onBackoff;
    this.#onRecord = options.onRecord;
    this.#agent = new Agent({
      connections: 16,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      connectTimeout: this.#timeoutMs,
    });
  }

  /** Requests sent so far, retries included. */
  get spent(): number {
    return this.#spent;
  }

  /** Every exchange of the run, in order. */
  get exchanges(): readonly Exchange[] {
    return this.#exchanges;
  }

  /**
   * Sends requests at the same moment: a token for each is taken first, then all go out together
   * (the concurrency checks). Never retried.
   */
  async sendConcurrently(checkId: string, specs: readonly RequestSpec[]): Promise<Exchange[]> {
    for (const _ of specs) await this.#bucket.take();
    return Promise.all(specs.map((spec) => this.send(checkId, { ...spec, unthrottled: true })));
  }

  /** Sends a request on behalf of a check. Transport failures are recorded, not thrown. */
  async send(checkId: string, spec: RequestSpec): Promise<Exchange> {
    const started = performance.now();
    const path = this.#basePath + onBasePath(spec.path, this.apiBasePath);
    const request: RecordedRequest = {
      method: spec.method,
      url: this.#origin + path,
      path: spec.path,
      headers: { ...(spec.headers ?? {}) },
      body:
        spec.body === undefined ? undefined : typeof spec.body === "string" ? encode(spec.body) : spec.body,
    };
    const retriable =
      !spec.unthrottled && spec.stream === undefined && (spec.method === "GET" || spec.method === "HEAD");
    const streamState = { bytes: 0, finished: false, answered: false, finishedBeforeAnswer: false };
    let attempts = 0;
    let response: RecordedResponse | undefined;
    let error: string | undefined;
    for (;;) {
      if (!spec.unthrottled) await this.#bucket.take();
      attempts++;
      this.#spent++;
      this.#onSend?.(this.#spent);
      try {
        response = await this.#dispatch(request, path, spec.stream && streamed(spec.stream, streamState));
        error = undefined;
      } catch (cause) {
        response = undefined;
        error = describeTransportError(cause, this.#timeoutMs);
        if (spec.stream !== undefined && !streamState.finished)
          error += ` (while still sending the body, after ${streamState.bytes} bytes)`;
        break;
      }
      if (response.status !== 429) break;
      // Without Retry-After (interface.md §8 does not show the answer to a limit), wait out the
      // window of a per-minute limit; the rate-limit probe, unthrottled, never waits.
      const retryAfterMs =
        parseRetryAfter(response.headers["retry-after"]) ?? (spec.unthrottled ? undefined : WINDOW_MS);
      if (retryAfterMs === undefined) break;
      // Whatever the method, no new request goes out before the server said it may.
      if (!spec.unthrottled) this.#bucket.pauseFor(retryAfterMs);
      if (!retriable || attempts > this.#maxRetries || retryAfterMs > this.#maxRetryWaitMs) break;
      this.#onBackoff?.(retryAfterMs);
    }
    const exchange: Exchange = {
      seq: this.#exchanges.length + 1,
      checkId,
      request,
      response,
      error,
      attempts,
      durationMs: performance.now() - started,
      ...(spec.stream === undefined
        ? {}
        : { stream: { bytes: streamState.bytes, finishedBeforeAnswer: streamState.finishedBeforeAnswer } }),
    };
    this.#exchanges.push(exchange);
    this.#onRecord?.(exchange);
    return exchange;
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #dispatch(
    request: RecordedRequest,
    path: string,
    stream?: { body: AsyncIterable<Uint8Array>; answered: () => void },
  ): Promise<RecordedResponse> {
    const result = await this.#agent.request({
      origin: this.#origin,
      path,
      method: request.method as "GET",
      headers: request.headers,
      body: stream === undefined ? (request.body ?? null) : Readable.from(stream.body, { objectMode: false }),
      // A check may send a malformed body on purpose; never let undici retry or pipeline it.
      idempotent: false,
    });
    stream?.answered();
    const headers = flattenHeaders(result.headers);
    try {
      const text = request.method === "HEAD" ? await drainHead(result.body) : await result.body.text();
      return { status: result.statusCode, headers, text };
    } catch (cause) {
      // The status and headers were read: they are the answer, even when the body was cut short
      // (a server that closes after an early 413 while the request is still being sent).
      if (stream === undefined) throw cause;
      return {
        status: result.statusCode,
        headers,
        text: "",
        cut: describeTransportError(cause, this.#timeoutMs),
      };
    }
  }
}

/** The API's base path on a server root (interface.md's paths). */
export const DEFAULT_API_BASE_PATH = "/api/partner";

/**
 * The API's own base path under a base URL when `--base-path` is not given. The path of the base
 * URL is where the API is mounted (a framework's prefix, a gateway's route), so the API answers
 * right there; a URL without a path is a server root, where the API answers under interface.md's
 * `/api/partner`.
 * @example defaultApiBasePath("https://api.example.com"); // "/api/partner"
 * @example defaultApiBasePath("https://api.example.com/yield/v1"); // ""
 */
export function defaultApiBasePath(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, "") === "" ? DEFAULT_API_BASE_PATH : "";
}

/**
 * A check's path on the deployment's own base path.
 * @example onBasePath("/api/partner/products", "/v1/partner"); // "/v1/partner/products"
 */
export function onBasePath(path: string, apiBasePath: string): string {
  if (apiBasePath === DEFAULT_API_BASE_PATH) return path;
  if (path === DEFAULT_API_BASE_PATH) return apiBasePath === "" ? "/" : apiBasePath;
  if (path.startsWith(`${DEFAULT_API_BASE_PATH}/`) || path.startsWith(`${DEFAULT_API_BASE_PATH}?`))
    return apiBasePath + path.slice(DEFAULT_API_BASE_PATH.length);
  return path;
}

/** Wraps a streamed body: counts its bytes and notes whether it ended before the response came. */
function streamed(
  make: (answered: () => boolean) => AsyncIterable<Uint8Array>,
  state: { bytes: number; finished: boolean; answered: boolean; finishedBeforeAnswer: boolean },
): { body: AsyncIterable<Uint8Array>; answered: () => void } {
  async function* body(): AsyncGenerator<Uint8Array> {
    for await (const chunk of make(() => state.answered)) {
      state.bytes += chunk.length;
      yield chunk;
    }
    state.finished = true;
    if (!state.answered) state.finishedBeforeAnswer = true;
  }
  return {
    body: body(),
    answered: () => {
      state.answered = true;
    },
  };
}

/** interface.md §8: limits are per minute. */
const WINDOW_MS = 60_000;

const encoder = new TextEncoder();
function encode(text: string): Uint8Array {
  return encoder.encode(text);
}

async function drainHead(body: { text(): Promise<string> }): Promise<string> {
  // undici ignores any body after HEAD; read to release the socket.
  return body.text();
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * `Retry-After` as milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 * @example parseRetryAfter("2"); // 2000
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^[0-9]+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * A transport error in words: its code, what it means and what to do (the timeout names
 * `--timeout`; https against a plain-http port says so instead of OpenSSL's record error).
 */
export function describeTransportError(cause: unknown, timeoutMs: number): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as { code?: unknown }).code;
  const inner = (cause as { cause?: unknown }).cause;
  const innerCode = inner instanceof Error ? (inner as { code?: unknown }).code : undefined;
  const name = typeof code === "string" ? code : typeof innerCode === "string" ? innerCode : "";
  const raw = `${cause.message}${inner instanceof Error ? `: ${inner.message}` : ""}`;
  switch (name) {
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return `${name}: no ${name === "UND_ERR_HEADERS_TIMEOUT" ? "response" : "end of the response body"} within --timeout ${timeoutMs} ms (the connection was open, the target did not answer in time); raise --timeout if the target is slow`;
    case "UND_ERR_CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return `${name}: no connection within --timeout ${timeoutMs} ms (a firewall dropping packets, or a wrong host or port); raise --timeout if the network is slow`;
    case "ECONNREFUSED":
      return `ECONNREFUSED: connection refused (nothing listens at that host and port): ${raw}`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `${name}: the host name does not resolve (check the host of --base-url): ${raw}`;
    case "EPIPE":
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return `${name}: the target closed the connection (${name === "EPIPE" ? "while the request was being written" : "reset"}): ${raw}`;
  }
  if (
    /^ERR_SSL_(WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST)$/.test(name) ||
    /wrong version number|packet length too long/i.test(raw)
  )
    return `${name || "TLS"}: the TLS handshake failed because the target answered in plain http, not https: use http:// in --base-url (or point it at the https port)`;
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(name))
    return `${name}: the target's TLS certificate is not trusted (${cause.message}); for a private CA, set NODE_EXTRA_CA_CERTS=ca.pem`;
  if (name.startsWith("ERR_SSL") || name.startsWith("ERR_TLS"))
    return `${name}: the TLS handshake failed (is --base-url's scheme and port right?)`;
  return `${name === "" ? "" : `${name} `}${raw}`;
}
