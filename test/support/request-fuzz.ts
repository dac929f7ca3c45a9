/**
 * Whole generated requests, and what every answer to one must satisfy (issue 10), shared by
 * `test/fuzz.test.ts` (the default run) and `bench/fuzz.ts` (`pnpm fuzz --runs N`).
 *
 * A request is generated as bytes-level parts (method, target, header lines, body) so the same
 * value can be sent to `handle()` in process and, as raw bytes, to a real server over a socket:
 * methods of every kind; targets with percent-encoding, dot segments, unicode and great length;
 * repeated, empty and huge query values; missing, duplicated, oversized and non-ASCII headers;
 * bodies of random bytes, invalid UTF-8, truncated JSON, prototype keys and deep nesting; and
 * correctly signed events with one field mutated, so the deep validation steps are reached.
 *
 * The checks: never a 5xx; the envelope (problem+json with type, title, status, code, detail and
 * request_id per CONTRACT §6, or the success shape) with its content type and the §9 headers; a
 * refused request stores nothing, and the limiter counts exactly what CONTRACT §4/§7 say it counts.
 */
import { connect } from "node:net";
import fc from "fast-check";
import {
  createPartnerApi,
  ERRORS,
  type ErrorCode,
  MemoryEventStore,
  MemoryRateLimiter,
  type PartnerApi,
  type PlainRequest,
  PROBLEM_TYPE_BASE,
  parseApiKey,
  type RateDecision,
  type RateLimiter,
  signBody,
} from "../../packages/core/src/index.js";
import { DEMO_CREDENTIALS as DEMO } from "../../packages/node-adapter/src/demo.js";
import { loadFixtureDir } from "../../packages/node-adapter/src/fixture-dir.js";
import { nodeHmacSha256, nodeSha256 } from "../../packages/node-adapter/src/hmac.js";

export const INBOUND = "/api/partner/webhooks/inbound";
const encoder = new TextEncoder();

/** One generated request. Header values are byte strings (latin1) so non-ASCII bytes survive. */
export interface FuzzRequest {
  readonly method: string;
  /** The request target as sent: path and query, or another form. */
  readonly target: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
  /** Which family generated it (for the counts). */
  readonly family: string;
}

// ---------------------------------------------------------------- generators

const segment = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      "api",
      "partner",
      "products",
      "webhooks",
      "inbound",
      "openapi.json",
      "usdc-base-prime",
      "weth-ethereum-staked",
      "position",
      "yield-calc",
      "healthz",
      "readyz",
      "",
      ".",
      "..",
      "%2e%2e",
      "%2E",
      "%2F",
      "%00",
      "%zz",
      "%",
      "%C3%A9",
      "%FF",
      "é",
      "😀",
      "a;b=c",
      DEMO.sandboxApiKey,
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.integer({ min: 256, max: 9000 }).map((n) => "a".repeat(n)) },
);

const path = fc.oneof(
  { weight: 3, arbitrary: fc.array(segment, { maxLength: 7 }).map((s) => `/${s.join("/")}`) },
  {
    weight: 3,
    arbitrary: fc.array(segment, { maxLength: 3 }).map((s) => `/api/partner/products/${s.join("/")}`),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "/api/partner/products",
      "/api/partner/products/usdc-base-prime",
      "/api/partner/products/usdc-base-prime/yield-calc",
      "/api/partner/products/usdc-base-prime/position",
      INBOUND,
      "/api/partner/openapi.json",
      "/healthz",
      "/readyz",
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom("*", "http://x/api/partner/products", "127.0.0.1:80", "//x", "") },
);

const queryValue = fc.oneof(
  fc.constantFrom(
    "1",
    "1000.5",
    "0",
    "-1",
    "1e3",
    "",
    "%",
    "%zz",
    "%00",
    "%C3%A9",
    "0.0000001",
    DEMO.walletWithPositions,
  ),
  fc.string({ unit: "grapheme-ascii", maxLength: 20 }),
  fc.integer({ min: 100, max: 20_000 }).map((n) => "9".repeat(n)),
);
const query = fc.oneof(
  { weight: 2, arbitrary: fc.constant("") },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom("amount", "address", "x", "", "amount[]", "AMOUNT"), queryValue), {
        maxLength: 5,
      })
      .chain((pairs) =>
        fc
          .constantFrom("&", ";", "&&")
          .map((sep) => `?${pairs.map(([k, v]) => (v === "" && k === "x" ? k : `${k}=${v}`)).join(sep)}`),
      ),
  },
);

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("GET", "POST", "HEAD") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "PUT",
      "DELETE",
      "PATCH",
      "OPTIONS",
      "TRACE",
      "get",
      "Post",
      "FOO",
      "M-SEARCH",
    ),
  },
);

const apiKey = fc.oneof(
  { weight: 6, arbitrary: fc.constant(DEMO.sandboxApiKey) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      DEMO.revokedSandboxApiKey,
      DEMO.productionApiKey,
      DEMO.otherPartnerSandboxApiKey,
      "ypk_test_",
      `${DEMO.sandboxApiKey}x`,
      DEMO.sandboxApiKey.toUpperCase(),
      "",
      " ",
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 50 }) },
);

const validTypes = ["partner.user.created", "partner.user.kyc_updated", "partner.reconciliation.confirmed"];

/** A `data` object, sometimes with prototype keys and deep nesting. */
const data = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, unknown>>(
      JSON.parse('{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'),
      JSON.parse('{"toString":1,"hasOwnProperty":"x","valueOf":[]}'),
      { amount: "1000.5", user_id: "u_1" },
    ),
  },
);

function nest(depth: number, open: string, close: string, inner: string): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

/** A signed event's body text, with the type it names and the mutation made to it. */
export interface EventText {
  readonly text: string;
  readonly type: string;
  readonly mutation: string;
}

/** Generators of a signed event body's fields: `eventTextOf` takes any of them in place of its own. */
export interface EventTextParts {
  readonly type: fc.Arbitrary<string>;
  readonly occurredAt: fc.Arbitrary<string>;
  readonly data: fc.Arbitrary<Record<string, unknown>>;
  /** none, drop, extra, data-not-object, deep, too-deep, duplicate, big-number, truncate, pretty or bom */
  readonly mutation: fc.Arbitrary<string>;
  readonly depth: fc.Arbitrary<number>;
  readonly cut: fc.Arbitrary<number>;
}

/**
 * A signed event's body text: valid, or with one field mutated.
 * @example eventTextOf({ mutation: fc.constant("extra") }) // bodies with one member too many
 */
export function eventTextOf(parts: Partial<EventTextParts> = {}): fc.Arbitrary<EventText> {
  return fc
    .record({
      type: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...validTypes) },
        { weight: 1, arbitrary: fc.string() },
      ),
      occurredAt: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom("2026-11-20T10:15:00Z", "2026-11-20T10:15:00.123+05:30") },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            "2026-02-29T00:00:00Z",
            "2026-11-20 10:15:00Z",
            "2026-11-20T10:15:00",
            "2016-12-31T23:59:60Z",
            "",
          ),
        },
      ),
      data,
      mutation: fc.constantFrom(
        "none",
        "none",
        "none",
        "none",
        "none",
        "none",
        "drop",
        "extra",
        "data-not-object",
        "deep",
        "too-deep",
        "duplicate",
        "big-number",
        "truncate",
        "pretty",
        "bom",
      ),
      depth: fc.integer({ min: 1, max: 200 }),
      cut: fc.nat(),
      ...parts,
    })
    .map(({ type, occurredAt, data: d, mutation, depth, cut }) => {
      const event: Record<string, unknown> = { event_type: type, occurred_at: occurredAt, data: d };
      switch (mutation) {
        case "drop":
          delete event[["event_type", "occurred_at", "data"][cut % 3]!];
          break;
        case "extra":
          event["extra"] = cut;
          break;
        case "data-not-object":
          event["data"] = [null, 1, "x", [], true][cut % 5];
          break;
        case "big-number":
          event["data"] = { n: 2 ** 64 + cut * 4096 }; // beyond a double's exact integers
          break;
      }
      let text = JSON.stringify(event);
      if (mutation === "deep" || mutation === "too-deep") {
        const levels = mutation === "deep" ? Math.min(depth, 60) : 64 + depth;
        text = text.replace(/"data":.*}$/, `"data":{"d":${nest(levels, "[", "]", "1")}}}`);
      }
      if (mutation === "duplicate") text = text.replace(/}$/, `,"event_type":"partner.user.kyc_updated"}`);
      if (mutation === "truncate") text = text.slice(0, cut % Math.max(1, text.length));
      if (mutation === "pretty") text = JSON.stringify(JSON.parse(text), null, 2);
      if (mutation === "bom") text = `\ufeff${text}`;
      return { text, type, mutation };
    });
}

const randomBody = fc.oneof(
  fc.constant(new Uint8Array(0)),
  fc.uint8Array({ maxLength: 300 }),
  fc.constantFrom(
    Uint8Array.from([0xff, 0xfe, 0x7b, 0x7d]),
    Uint8Array.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]), // {"\xc3(":1}
    Uint8Array.from([0xed, 0xa0, 0x80]), // a UTF-8-encoded surrogate
  ),
  fc.json({ maxDepth: 4 }).map((t) => encoder.encode(t)),
  fc.integer({ min: 1, max: 3000 }).map((n) => encoder.encode(nest(n, '{"a":', "}", "1"))),
  fc.integer({ min: 1, max: 3000 }).map((n) => encoder.encode(nest(n, "[", "]", ""))),
  fc
    .constantFrom(
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      '{"event_type":"partner.user.created","__proto__":{"occurred_at":"2026-11-20T10:15:00Z","data":{}}}',
      "null",
      "[]",
      '"x"',
      "1e400",
      "-0",
      "{",
    )
    .map((t) => encoder.encode(t)),
  fc.integer({ min: 65_000, max: 70_000 }).map((n) => encoder.encode(`{"x":"${"y".repeat(n)}"}`)),
);

const headerValue = fc.oneof(
  fc.string({ unit: "grapheme-ascii", maxLength: 30 }),
  fc.constantFrom("", " ", "\t", "é", "\u00ff\u00fe", "a,b", "application/json, text/plain"),
  fc.integer({ min: 9000, max: 20_000 }).map((n) => "h".repeat(n)),
);

/** Extra header lines: duplicates of the ones that matter, oversized and non-ASCII ones. */
const extraHeaders = fc.array(
  fc.tuple(
    fc.constantFrom(
      "X-Api-Key",
      "Content-Type",
      "Idempotency-Key",
      "X-Partner-Signature",
      "X-Partner-Event",
      "X-Request-Id",
      "X-Forwarded-For",
      "Accept",
      "X-Custom",
    ),
    headerValue,
  ),
  { maxLength: 3 },
);

/** Mostly `usual`, sometimes one of `rare` (one in `1 + weight`). */
function mostly<T>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<T>, weight = 6): fc.Arbitrary<T> {
  return fc.oneof({ weight, arbitrary: usual }, { weight: 1, arbitrary: rare });
}

/** Generators of a signed event request's parts: `signedEventOf` takes any of them in place of its own. */
export interface SignedEventParts {
  readonly body: fc.Arbitrary<EventText>;
  readonly key: fc.Arbitrary<string>;
  /** right, rotated, prefixed or upper (a right signature); wrong, none or other (the other partner's secret) */
  readonly signing: fc.Arbitrary<string>;
  readonly idempotencyKey: fc.Arbitrary<string>;
  /** match (X-Partner-Event names the body's type), none or other */
  readonly eventHeader: fc.Arbitrary<string>;
  readonly contentType: fc.Arbitrary<string>;
  readonly extra: fc.Arbitrary<[string, string][]>;
  readonly omitIdempotency: fc.Arbitrary<boolean>;
}

/**
 * A correctly signed event (most of the time), to reach every step of CONTRACT §5.
 * @example signedEventOf({ signing: fc.constant("wrong") }) // events with a wrong signature
 */
export function signedEventOf(parts: Partial<SignedEventParts> = {}): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      body: eventTextOf(),
      key: mostly(fc.constant(DEMO.sandboxApiKey), apiKey, 8),
      signing: mostly(
        fc.constantFrom("right", "rotated", "prefixed", "upper"),
        fc.constantFrom("wrong", "none", "other"),
        8,
      ),
      idempotencyKey: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom("k-1", "k-2", "k-3", "k-4") },
        { weight: 4, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 20 }) },
        { weight: 1, arbitrary: fc.constantFrom("", " ", "k 1", "é", "x".repeat(256), "x".repeat(255)) },
      ),
      eventHeader: mostly(fc.constant("match"), fc.constantFrom("none", "other"), 8),
      contentType: mostly(
        fc.constantFrom(
          "application/json",
          "application/json; charset=utf-8",
          'Application/JSON;charset="UTF-8"',
        ),
        fc.constantFrom("text/plain", "application/json; charset=latin1", ""),
        8,
      ),
      extra: mostly(fc.constant([] as [string, string][]), extraHeaders, 3),
      omitIdempotency: mostly(fc.constant(false), fc.constant(true), 8),
      ...parts,
    })
    .map(({ body, key, signing, idempotencyKey, eventHeader, contentType, extra, omitIdempotency }) => {
      const bytes = encoder.encode(body.text);
      const secret = signing === "rotated" ? DEMO.rotatedSigningSecret : DEMO.signingSecret;
      const sig = signBody(signing === "other" ? DEMO.otherPartnerSigningSecret : secret, bytes);
      const headers: [string, string][] = [
        ["X-Api-Key", key],
        ["Content-Type", contentType],
      ];
      if (signing !== "none") {
        const value =
          signing === "prefixed"
            ? `sha256=${sig}`
            : signing === "upper"
              ? sig.toUpperCase()
              : signing === "wrong"
                ? sig.replace(/^./, (c) => (c === "0" ? "1" : "0"))
                : sig;
        headers.push(["X-Partner-Signature", value]);
      }
      if (!omitIdempotency) headers.push(["Idempotency-Key", idempotencyKey]);
      if (eventHeader !== "none")
        headers.push(["X-Partner-Event", eventHeader === "match" ? body.type : "partner.other"]);
      return {
        method: "POST",
        target: INBOUND,
        headers: [...headers, ...extra],
        body: bytes,
        family: `signed-event:${body.mutation}`,
      };
    });
}

/** Anything: method, target, headers and body generated independently. */
const anyRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method,
    path,
    query,
    key: fc.option(apiKey, { nil: undefined }),
    body: randomBody,
    sign: fc.boolean(),
    extra: extraHeaders,
  })
  .map(({ method: m, path: p, query: q, key, body, sign, extra }) => {
    const headers: [string, string][] = [];
    if (key !== undefined) headers.push(["X-Api-Key", key]);
    if (body.length > 0) headers.push(["Content-Type", "application/json"]);
    if (sign) headers.push(["X-Partner-Signature", signBody(DEMO.signingSecret, body)]);
    return { method: m, target: p + q, headers: [...headers, ...extra], body, family: "any" };
  });

/** The requests both runs draw from: half signed events (the deep steps), half anything. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(signedEventOf(), anyRequest);

// ---------------------------------------------------------------- the API under test

/** Every `hit` of the limiter during one request. */
export class CountingLimiter implements RateLimiter {
  readonly hits: string[] = [];
  readonly #inner = new MemoryRateLimiter();
  hit(key: string, limit: number, windowMs: number): RateDecision {
    this.hits.push(key);
    return this.#inner.hit(key, limit, windowMs);
  }
  peek(key: string, limit: number, windowMs: number): RateDecision {
    return this.#inner.peek(key, limit, windowMs);
  }
  close(): Promise<void> {
    return this.#inner.close();
  }
}

export interface FuzzTarget {
  readonly api: PartnerApi;
  readonly events: MemoryEventStore;
  readonly limiter: CountingLimiter;
}

/** The sandbox API with quotas out of the way (so every refusal is the request's own). */
export function createFuzzTarget(fixturesDir: string): FuzzTarget {
  const events = new MemoryEventStore();
  const limiter = new CountingLimiter();
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadFixtureDir(fixturesDir),
    events,
    rateLimiter: limiter,
    rateLimitOverride: 1_000_000_000,
    failedAuthPerMinute: 1_000_000_000,
    hmac: nodeHmacSha256,
    sha256: nodeSha256,
    onError: (error) => {
      throw error;
    },
  });
  return { api, events, limiter };
}

/** The request as `handle()` takes it (what the node adapter would hand over). */
export function toPlainRequest(request: FuzzRequest): PlainRequest {
  const q = request.target.indexOf("?");
  const headers: Record<string, string> = {};
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
  }
  return {
    method: request.method,
    path: q < 0 ? request.target : request.target.slice(0, q),
    query: q < 0 ? undefined : request.target.slice(q + 1),
    headers,
    body: request.body,
    clientAddress: "192.0.2.1",
  };
}

/** The request as bytes on the wire: HTTP/1.1 with its exact Content-Length. */
export function toBytes(request: FuzzRequest): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close"];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  if (request.body.length > 0 || request.method === "POST")
    lines.push(`Content-Length: ${request.body.length}`);
  // Target and header values are UTF-16 strings: non-Latin-1 characters go as UTF-8, the rest byte for byte.
  const head = lines.join("\r\n");
  const headBytes = /[^\u0000-\u00ff]/.test(head) ? Buffer.from(head, "utf8") : Buffer.from(head, "latin1");
  return Buffer.concat([headBytes, Buffer.from("\r\n\r\n", "latin1"), request.body]);
}

// ---------------------------------------------------------------- what an answer must be

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

/** Statuses and codes seen, for the report. */
export class Tally {
  readonly byOutcome = new Map<string, number>();
  readonly byFamily = new Map<string, number>();
  total = 0;
  add(request: FuzzRequest, outcome: string): void {
    this.total++;
    this.byOutcome.set(outcome, (this.byOutcome.get(outcome) ?? 0) + 1);
    this.byFamily.set(request.family, (this.byFamily.get(request.family) ?? 0) + 1);
  }
  sorted(map: Map<string, number>): Record<string, number> {
    return Object.fromEntries([...map].sort((a, b) => b[1] - a[1]));
  }
}

function fail(message: string, request: FuzzRequest, answer: Answer): never {
  const shown = {
    method: request.method,
    target: request.target.length > 200 ? `${request.target.slice(0, 200)}…` : request.target,
    headers: request.headers.map(([n, v]) => [n, v.length > 100 ? `${v.slice(0, 100)}…` : v]),
    body: new TextDecoder().decode(request.body.subarray(0, 200)),
  };
  throw new Error(
    `${message}\nrequest: ${JSON.stringify(shown)}\nanswer: ${answer.status} ${JSON.stringify(answer.headers)} ${answer.body?.slice(0, 400)}`,
  );
}

const PUBLIC_SUCCESS = new Set(["/healthz", "/readyz", "/api/partner/openapi.json"]);

/**
 * Never a 5xx; the §6/§9 envelope; returns "status code" for the tally.
 * @throws Error naming the request and the answer when a property fails.
 */
export function checkAnswer(request: FuzzRequest, answer: Answer): string {
  if (answer.status >= 500) fail(`a ${answer.status}`, request, answer);
  if (answer.status < 200) fail(`status ${answer.status}`, request, answer);
  const h = answer.headers;
  if (!h["x-request-id"]) fail("no X-Request-Id", request, answer);
  if (h["cache-control"] !== "no-store") fail("Cache-Control is not no-store", request, answer);
  if (h["x-content-type-options"] !== "nosniff") fail("no nosniff", request, answer);
  const head = request.method === "HEAD";
  const path = request.target.split("?")[0]!;
  if (answer.status >= 400) {
    if (h["content-type"] !== "application/problem+json; charset=utf-8")
      fail("error without problem+json", request, answer);
    if (head) return `${answer.status} (HEAD)`;
    let problem: Record<string, unknown>;
    try {
      problem = JSON.parse(answer.body ?? "") as Record<string, unknown>;
    } catch {
      return fail("problem body is not JSON", request, answer);
    }
    const code = problem["code"] as ErrorCode;
    const entry = ERRORS[code];
    if (entry === undefined) fail(`unknown code ${String(code)}`, request, answer);
    if (problem["success"] !== false) fail("success is not false", request, answer);
    if (problem["status"] !== answer.status || entry.status !== answer.status)
      fail("status mismatch", request, answer);
    if (problem["type"] !== PROBLEM_TYPE_BASE + code) fail("type mismatch", request, answer);
    if (problem["title"] !== entry.title) fail("title mismatch", request, answer);
    if (typeof problem["detail"] !== "string" || problem["detail"] === "") fail("no detail", request, answer);
    if (problem["request_id"] !== h["x-request-id"])
      fail("request_id differs from X-Request-Id", request, answer);
    if (answer.status === 429 || answer.status === 503) {
      if (!/^[1-9][0-9]*$/.test(h["retry-after"] ?? "")) fail("no Retry-After", request, answer);
    }
    if (answer.status === 405 && !h["allow"]) fail("405 without Allow", request, answer);
    return `${answer.status} ${code}`;
  }
  if (h["content-type"] !== "application/json; charset=utf-8")
    fail("success without application/json", request, answer);
  if (head) return `${answer.status} (HEAD)`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.body ?? "") as Record<string, unknown>;
  } catch {
    return fail("success body is not JSON", request, answer);
  }
  if (body["success"] !== true && !PUBLIC_SUCCESS.has(path) && !path.startsWith("http://"))
    fail("success without success: true", request, answer);
  return `${answer.status}`;
}

/** What the stores hold, for the before/after comparison. */
export interface StoreState {
  readonly events: number;
  readonly bytes: number;
  readonly lastId: number;
}

export async function storeState(events: MemoryEventStore): Promise<StoreState> {
  const last = events.size === 0 ? undefined : (await events.list(events.size - 1, 1))[0];
  return { events: events.size, bytes: events.bytes, lastId: last?.id ?? 0 };
}

/**
 * A refused request stores nothing; an accepted event is stored once, exactly as sent; a duplicate
 * stores nothing. `hits` are the limiter's counts during the request: exactly what CONTRACT §4/§7
 * count (`exactHits`: in process, where every answer comes from the core).
 */
export async function checkState(
  request: FuzzRequest,
  answer: Answer,
  outcome: string,
  before: StoreState,
  target: FuzzTarget,
  hits: readonly string[],
  exactHits: boolean,
): Promise<void> {
  const after = await storeState(target.events);
  const created =
    answer.status === 200 &&
    request.method === "POST" &&
    answer.body !== null &&
    (JSON.parse(answer.body) as { duplicate?: boolean }).duplicate === false;
  if (created) {
    if (after.events !== before.events + 1) fail("an accepted event was not stored once", request, answer);
    const stored = (await target.events.list(before.events, 1))[0]!;
    const id = (JSON.parse(answer.body!) as { event_id: number }).event_id;
    if (stored.id !== id) fail("event_id is not the stored event's", request, answer);
    if (!Buffer.from(request.body).equals(Buffer.from(encoder.encode(stored.rawBody))))
      fail("the stored body differs from the signed bytes", request, answer);
  } else if (
    after.events !== before.events ||
    after.bytes !== before.bytes ||
    after.lastId !== before.lastId
  ) {
    fail(`state changed by a request answered ${outcome}`, request, answer);
  }
  // A failure counts once against the address and, for a well-formed key of this environment,
  // once against the key (CONTRACT §4): its limiter key is `auth:` + U+0001 + the key's hash.
  const byKey = hits.filter((k) => k.startsWith("auth:\u0001")).length;
  const auth = hits.filter((k) => k.startsWith("auth:") && !k.startsWith("auth:\u0001")).length;
  const rate = hits.filter((k) => k.startsWith("rate:")).length;
  if (auth + rate > 1 || byKey > auth)
    fail(`the limiter counted ${auth + byKey + rate} hits for one request`, request, answer);
  // A HEAD answer has no body to read the code from.
  if (!exactHits || request.method === "HEAD") return;
  const code = outcome.split(" ")[1];
  const expected =
    code === "not_found" ||
    code === "method_not_allowed" ||
    code === "missing_api_key" ||
    isPublic(request, answer)
      ? [0, 0]
      : code === "invalid_api_key" || code === "wrong_environment"
        ? [1, 0]
        : [0, 1];
  const keys = request.headers.filter(([name]) => name.toLowerCase() === "x-api-key");
  const parsed = keys.length === 1 ? parseApiKey(keys[0]![1]) : undefined;
  const wellFormed = code === "invalid_api_key" && parsed?.ok === true && parsed.value === "sandbox";
  if (auth !== expected[0] || rate !== expected[1] || byKey !== (wellFormed ? 1 : 0))
    fail(
      `limiter hits auth ${auth} (by key ${byKey}), rate ${rate}; expected ${expected.join(", ")} for ${outcome}`,
      request,
      answer,
    );
}

function isPublic(request: FuzzRequest, answer: Answer): boolean {
  // The OpenAPI document is the one public route of the core; it answers 200 without a key.
  return answer.status === 200 && request.target.split("?")[0] === "/api/partner/openapi.json";
}

// ---------------------------------------------------------------- running one request

/** In process: `handle()`, then every check. */
export async function runInProcess(target: FuzzTarget, request: FuzzRequest, tally: Tally): Promise<void> {
  const before = await storeState(target.events);
  target.limiter.hits.length = 0;
  const answer = await target.api.handle(toPlainRequest(request));
  const outcome = checkAnswer(request, answer);
  await checkState(request, answer, outcome, before, target, target.limiter.hits, true);
  tally.add(request, outcome);
}

/** Over a socket to a running server on `port` that serves `target`: raw bytes out, the answer parsed. */
export async function runOverSocket(
  port: number,
  target: FuzzTarget,
  request: FuzzRequest,
  tally: Tally,
): Promise<void> {
  const before = await storeState(target.events);
  target.limiter.hits.length = 0;
  const raw = await exchange(port, toBytes(request));
  const answer = parseResponse(raw, request.method === "HEAD");
  if (answer === undefined) {
    throw new Error(
      `no complete HTTP answer over the socket (${raw.length} bytes: ${raw.subarray(0, 200).toString("latin1")})\nrequest: ${request.method} ${request.target.slice(0, 200)}`,
    );
  }
  const outcome = checkAnswer(request, answer);
  await checkState(request, answer, outcome, before, target, target.limiter.hits, false);
  tally.add(request, outcome);
}

/** Writes the bytes, half-closes, reads until the server closes (at most 10 s). */
export function exchange(port: number, bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, 10_000);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => undefined); // a reset after the answer: what arrived is judged
    socket.on("close", done);
    socket.end(bytes);
  });
}

/** One HTTP/1.1 response from raw bytes, or undefined when it is incomplete. */
export function parseResponse(raw: Buffer, head: boolean): Answer | undefined {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const lines = raw.subarray(0, end).toString("latin1").split("\r\n");
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0] ?? "");
  if (status === null) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers["content-length"] ?? "0");
  const body = raw.subarray(end + 4);
  if (head) return { status: Number(status[1]), headers, body: null };
  if (body.length < length) return undefined;
  return {
    status: Number(status[1]),
    headers,
    body: length === 0 ? null : body.subarray(0, length).toString("utf8"),
  };
}
