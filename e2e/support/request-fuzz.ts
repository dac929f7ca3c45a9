/**
 * Whole generated requests, and what every answer to one must satisfy (issue 10), shared by
 * `e2e/fuzz.test.ts` (the default run) and `bench/fuzz.ts` (`pnpm fuzz --runs N`).
 *
 * A request is generated as bytes-level parts (method, target, header lines, body) so the same
 * value can be sent to `handle()` in process and, as raw bytes, to a real server over a socket:
 * methods of every kind; targets with percent-encoding, dot segments, unicode and great length;
 * repeated, empty and huge query values; missing, duplicated, oversized and non-ASCII headers;
 * bodies of random bytes, invalid UTF-8, truncated JSON, prototype keys and deep nesting; and
 * correctly signed events with one field mutated, so the deep validation steps are reached.
 *
 * In process, a request comes from a client address: IPv4, IPv6 in a few /64s spelt every way
 * (zeros, case, compression, a zone, an embedded IPv4 tail) and IPv4-mapped; the failed-auth count
 * of a refusal must land in that address's bucket (CONTRACT §4: its /64, or the mapped IPv4).
 *
 * Slow bodies (`slowScenario`): signed events whose body arrives in pieces (in process a body
 * reader that resolves later, over a socket the body written in parts), while the run revokes,
 * restores and rotates the key and the signing secrets (and sends other requests in between). The
 * model predicts each answer exactly: the key and secrets as they are when the body completes
 * decide it (CONTRACT §4, §5), and a refusal after the body counts no failed authentication.
 *
 * The checks: never a 5xx; the envelope (problem+json with type, title, status, code, detail and
 * request_id per CONTRACT §6, or the success shape) with its content type and the §9 headers; a
 * refused request stores nothing, an accepted event is stored with the key and secret that
 * authorised it, and the limiter counts exactly what CONTRACT §4/§7 say it counts.
 */
import { connect } from "node:net";
import fc from "fast-check";
import { DEMO_CREDENTIALS as DEMO } from "../../packages/core/src/demo/index.js";
import {
  type ApiKeyRecord,
  type AppendResult,
  createPartnerApi,
  ERRORS,
  type ErrorCode,
  type EventCredentials,
  generateApiKey,
  hashApiKey,
  MemoryEventStore,
  MemoryRateLimiter,
  type NewEvent,
  type Partner,
  type PartnerApi,
  type PlainRequest,
  PROBLEM_TYPE_BASE,
  parseApiKey,
  type RateDecision,
  type RateLimiter,
  type SandboxData,
  signBody,
} from "../../packages/core/src/index.js";
import { loadFixtureDir } from "../../packages/node-adapter/src/fixture-dir.js";
import { nodeHmacSha256, nodeSha256 } from "../../packages/node-adapter/src/hmac.js";
import { type RunningServer, startServer } from "../../packages/node-adapter/src/index.js";

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
  /** In process: the client's address (default 192.0.2.1). A socket's is the connection's own. */
  readonly client?: ClientAddress | undefined;
}

/** A client address as its socket reports it, and the bucket its failures must count in. */
export interface ClientAddress {
  readonly address: string;
  /** Known by construction, not computed by `addressBucket`: the /64 or the mapped IPv4 address. */
  readonly bucket: string;
}

const DEFAULT_CLIENT: ClientAddress = { address: "192.0.2.1", bucket: "192.0.2.1" };

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

const hex = (n: number) => n.toString(16);

/** Four /64 prefixes (their first four groups) and each one's bucket as CONTRACT §4 writes it. */
const PREFIXES: readonly (readonly [readonly number[], string])[] = [
  [[0x2001, 0xdb8, 0x1, 0x2], "2001:db8:1:2::/64"],
  [[0x2001, 0xdb8, 0, 0], "2001:db8::/64"],
  [[0xfe80, 0, 0, 0], "fe80::/64"],
  [[0x2001, 0xdb8, 0xabcd, 0xffff], "2001:db8:abcd:ffff::/64"],
];

/** Eight groups written one of the ways a client or a proxy may write them. */
const ipv6Text = (groups: readonly number[]) =>
  fc
    .record({
      pad: fc.boolean(),
      upper: fc.boolean(),
      elide: fc.option(fc.tuple(fc.nat(7), fc.nat(7)), { nil: undefined }),
      ipv4Tail: fc.boolean(),
      zone: fc.boolean(),
    })
    .map(({ pad, upper, elide, ipv4Tail, zone }) => {
      let parts = groups.map((g) => (pad ? hex(g).padStart(4, "0") : hex(g)));
      if (ipv4Tail)
        parts = [
          ...parts.slice(0, 6),
          `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`,
        ];
      let text = parts.join(":");
      // "::" stands for a run of zero groups (any run: 1 group, a part of a longer run) before the tail.
      if (elide !== undefined) {
        const start = Math.min(elide[0], elide[1]);
        let end = Math.max(elide[0], elide[1]) + 1;
        end = Math.min(end, ipv4Tail ? 6 : 8);
        if (start < end && groups.slice(start, end).every((g) => g === 0))
          text = `${parts.slice(0, start).join(":")}::${parts.slice(end).join(":")}`;
      }
      if (upper) text = text.toUpperCase();
      return zone && groups[0] === 0xfe80 ? `${text}%eth0` : text;
    });

const group = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
const ipv4 = fc.tuple(fc.constantFrom([192, 0, 2], [198, 51, 100]), fc.integer({ min: 0, max: 255 }));

/**
 * Client addresses: IPv4, IPv6 in four /64s (several interface ids each, every spelling) and
 * IPv4-mapped IPv6 (dotted or hex), each with the bucket its failed authentications count in.
 * @example fc.sample(clientAddress, 1); // [{ address: "2001:DB8::1:0:0:5", bucket: "2001:db8::/64" }]
 */
export const clientAddress: fc.Arbitrary<ClientAddress> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(DEFAULT_CLIENT) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...PREFIXES), fc.tuple(group, group, group, group))
      .chain(([[prefix, bucket], id]) =>
        ipv6Text([...prefix, ...id]).map((address) => ({ address, bucket })),
      ),
  },
  {
    weight: 1,
    arbitrary: ipv4.chain(([[a, b, c], d]) =>
      fc
        .constantFrom(
          `::ffff:${a}.${b}.${c}.${d}`,
          `::FFFF:${a}.${b}.${c}.${d}`,
          `0:0:0:0:0:ffff:${a}.${b}.${c}.${d}`,
          `::ffff:${hex((a << 8) | b)}:${hex((c << 8) | d)}`,
          `0000:0000:0000:0000:0000:FFFF:${hex((a << 8) | b).padStart(4, "0")}:${hex((c << 8) | d).padStart(4, "0")}`,
        )
        .map((address) => ({ address, bucket: `${a}.${b}.${c}.${d}` })),
    ),
  },
);

/** The requests both runs draw from: half signed events (the deep steps), half anything, from any client. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .tuple(fc.oneof(signedEventOf(), anyRequest), clientAddress)
  .map(([request, client]) => (client === DEFAULT_CLIENT ? request : { ...request, client }));

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

/** The in-memory event store, remembering what authorised the last event it created. */
export class RecordingEventStore extends MemoryEventStore {
  lastAuthorizedBy: EventCredentials | undefined;
  override append(event: NewEvent): Promise<AppendResult> {
    const appended = super.append(event);
    return appended.then((result) => {
      if (result.status === "created") this.lastAuthorizedBy = event.authorizedBy;
      return result;
    });
  }
}

export interface FuzzTarget {
  readonly api: PartnerApi;
  readonly events: RecordingEventStore;
  readonly limiter: CountingLimiter;
  /** The stores and records behind the API: the slow-body runs revoke and restore in them. */
  readonly data: SandboxData;
  /**
   * Called when the core asks for the body of a request with this Idempotency-Key (over a socket,
   * how a slow-body run knows the request was authenticated and now waits for its body).
   */
  readonly bodyAsked: Map<string, () => void>;
}

/** The sandbox API with quotas out of the way (so every refusal is the request's own). */
export function createFuzzTarget(fixturesDir: string): FuzzTarget {
  const events = new RecordingEventStore();
  const limiter = new CountingLimiter();
  const data = loadFixtureDir(fixturesDir);
  const bodyAsked = new Map<string, () => void>();
  const inner = createPartnerApi({
    environment: "sandbox",
    ...data,
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
  const api: PartnerApi = {
    ...inner,
    handle(request) {
      const reader = request.body;
      const asked =
        typeof reader === "function" ? bodyAsked.get(request.headers["idempotency-key"] ?? "") : undefined;
      if (asked === undefined || typeof reader !== "function") return inner.handle(request);
      return inner.handle({
        ...request,
        body: (limit) => {
          asked();
          return reader(limit);
        },
      });
    },
  };
  return { api, events, limiter, data, bodyAsked };
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
    // As the socket reports it: the core counts a failure in the address's bucket (its /64).
    clientAddress: (request.client ?? DEFAULT_CLIENT).address,
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

/** The limiter hits one request must make: failures by address and by key, and the rate limit. */
export interface ExpectedHits {
  readonly auth: number;
  readonly byKey: number;
  readonly rate: number;
}

/**
 * A refused request stores nothing; an accepted event is stored once, exactly as sent, with the
 * key it presented and a secret that signs it as `authorizedBy`; a duplicate stores nothing.
 * `hits` are the limiter's counts during the request: exactly what CONTRACT §4/§7 count
 * (`exactHits`: in process, where every answer comes from the core; or the hits given), and a
 * failure's address count is in the client's `bucket`.
 */
export async function checkState(
  request: FuzzRequest,
  answer: Answer,
  outcome: string,
  before: StoreState,
  target: FuzzTarget,
  hits: readonly string[],
  exactHits: boolean | ExpectedHits,
  bucket: string,
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
    const by = target.events.lastAuthorizedBy;
    const key = request.headers.find(([name]) => name.toLowerCase() === "x-api-key")?.[1] ?? "";
    const signature = request.headers.find(([name]) => name.toLowerCase() === "x-partner-signature")?.[1];
    if (by === undefined || by.keyHash !== hashApiKey(key, nodeSha256))
      fail(`authorizedBy names another key: ${JSON.stringify(by?.keyHash)}`, request, answer);
    if (!signature?.toLowerCase().endsWith(signBody(by.signingSecret, request.body, nodeHmacSha256)))
      fail("authorizedBy names a secret that did not sign the body", request, answer);
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
  const addressKey = `auth:${bucket}`;
  const elsewhere = hits.find(
    (k) => k.startsWith("auth:") && !k.startsWith("auth:\u0001") && k !== addressKey,
  );
  if (elsewhere !== undefined)
    fail(
      `a failure counted in ${JSON.stringify(elsewhere)}, not ${JSON.stringify(addressKey)}`,
      request,
      answer,
    );
  if (typeof exactHits === "object") {
    if (auth !== exactHits.auth || byKey !== exactHits.byKey || rate !== exactHits.rate)
      fail(
        `limiter hits auth ${auth} (by key ${byKey}), rate ${rate}; expected ${JSON.stringify(exactHits)}`,
        request,
        answer,
      );
    return;
  }
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
  const bucket = (request.client ?? DEFAULT_CLIENT).bucket;
  await checkState(request, answer, outcome, before, target, target.limiter.hits, true, bucket);
  tally.add(request, outcome);
}

/** A running server that serves a fuzz target: where to connect, and the bucket its client counts in. */
export interface Listening {
  readonly port: number;
  /** 127.0.0.1 or ::1. */
  readonly host: string;
  /** The bucket of the connecting client's address: 127.0.0.1, or ::/64 for ::1. */
  readonly bucket: string;
}

/**
 * A server for `target` on `host` (an ephemeral port), or why it cannot listen there (no IPv6
 * loopback on this machine: the caller skips that part and says so).
 * @example const started = await startFuzzServer(target, "::1"); if (typeof started === "string") console.log(started);
 */
export async function startFuzzServer(
  target: FuzzTarget,
  host: "127.0.0.1" | "::1",
): Promise<{ server: RunningServer; listening: Listening } | string> {
  let server: RunningServer;
  try {
    server = await startServer({ api: target.api, port: 0, host, log: "none" });
  } catch (error) {
    return `cannot listen on ${host}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
  return { server, listening: { port: server.port, host, bucket: host === "::1" ? "::/64" : host } };
}

/** Over a socket to a running server that serves `target`: raw bytes out, the answer parsed. */
export async function runOverSocket(
  to: Listening,
  target: FuzzTarget,
  request: FuzzRequest,
  tally: Tally,
): Promise<void> {
  const before = await storeState(target.events);
  target.limiter.hits.length = 0;
  const raw = await exchange(to.port, toBytes(request), to.host);
  const answer = parseResponse(raw, request.method === "HEAD");
  if (answer === undefined) {
    throw new Error(
      `no complete HTTP answer over the socket (${raw.length} bytes: ${raw.subarray(0, 200).toString("latin1")})\nrequest: ${request.method} ${request.target.slice(0, 200)}`,
    );
  }
  const outcome = checkAnswer(request, answer);
  await checkState(request, answer, outcome, before, target, target.limiter.hits, false, to.bucket);
  tally.add(request, outcome);
}

/** Writes the bytes, half-closes, reads until the server closes (at most 10 s). */
export function exchange(port: number, bytes: Buffer, host = "127.0.0.1"): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
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

// ---------------------------------------------------------------- slow bodies and revocations

/** A sandbox key of the demo partner that no fixture holds: slow-body runs add and revoke it. */
const FRESH_KEY = generateApiKey("sandbox");
const FRESH_KEY_HASH = hashApiKey(FRESH_KEY, nodeSha256);
/** A signing secret no fixture holds: slow-body runs rotate to it and away from it. */
const FRESH_SECRET = "whsec_fuzzFreshSecretRotatedInMidBodyX";

export type KeyName = "demo" | "fresh";
export type SecretName = "demo" | "rotated" | "fresh";
const KEYS: Readonly<Record<KeyName, string>> = { demo: DEMO.sandboxApiKey, fresh: FRESH_KEY };
const SECRETS: Readonly<Record<SecretName, string>> = {
  demo: DEMO.signingSecret,
  rotated: DEMO.rotatedSigningSecret,
  fresh: FRESH_SECRET,
};

/** Which of the demo partner's keys and secrets are active: the model's state. */
interface Credentials {
  readonly keys: Record<KeyName, boolean>;
  readonly secrets: Record<SecretName, boolean>;
}

/** A signed event whose body arrives in pieces. */
export interface SlowEvent {
  readonly key: KeyName;
  readonly signer: SecretName;
  /** The body is a proper prefix of an event's text: 400 invalid_json once key and signature pass. */
  readonly truncated: boolean;
  /** The request, its Idempotency-Key left for the run to add (one of its own). */
  readonly request: FuzzRequest;
  /** The body in one to four pieces. */
  readonly pieces: readonly Uint8Array[];
}

/** One step of a slow-body run. */
export type SlowStep =
  | { readonly kind: "start"; readonly event: number }
  | { readonly kind: "piece"; readonly event: number; readonly piece: number }
  | { readonly kind: "key"; readonly key: KeyName; readonly active: boolean }
  | { readonly kind: "secret"; readonly secret: SecretName; readonly active: boolean }
  | { readonly kind: "request"; readonly request: FuzzRequest };

/** Slow events, and the order of their heads, their pieces, credential changes and other requests. */
export interface SlowScenario {
  readonly events: readonly SlowEvent[];
  readonly steps: readonly SlowStep[];
  /** In process, every event's client address (over a socket, the connection's). */
  readonly client: ClientAddress;
}

/** `data` without numbers beyond a double's exact integers: the schema accepts it. */
const slowData = fc.dictionary(
  fc.string({ maxLength: 8 }),
  fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null)),
  { maxKeys: 4 },
);

/** Generators of a slow event's parts: `slowEventOf` takes any of them in place of its own. */
export interface SlowEventParts {
  readonly key: fc.Arbitrary<KeyName>;
  readonly signer: fc.Arbitrary<SecretName>;
  readonly truncated: fc.Arbitrary<boolean>;
  /** Where the body is cut into pieces (taken modulo its length). */
  readonly cuts: fc.Arbitrary<number[]>;
}

/**
 * A signed event (valid, or cut short) whose body is sent in pieces, with the demo key or a
 * fresh one, signed with the demo, the rotated or a fresh secret.
 * @example slowEventOf({ signer: fc.constant("fresh") }) // signed with a secret not yet active
 */
export function slowEventOf(parts: Partial<SlowEventParts> = {}): fc.Arbitrary<SlowEvent> {
  return fc
    .record({
      body: eventTextOf({
        type: fc.constantFrom(...validTypes),
        occurredAt: fc.constantFrom("2026-11-20T10:15:00Z", "2026-11-20T10:15:00.123+05:30"),
        data: slowData,
        mutation: fc.constant("none"),
      }),
      form: fc.constantFrom("right", "prefixed", "upper"),
      cutAt: fc.nat(),
      key: fc.constantFrom<KeyName>("demo", "demo", "demo", "demo", "demo", "fresh"),
      signer: fc.constantFrom<SecretName>("demo", "demo", "rotated", "rotated", "fresh"),
      truncated: fc.constantFrom(false, false, false, false, false, true),
      cuts: fc.array(fc.nat(), { maxLength: 3 }),
      ...parts,
    })
    .map(({ body, form, cutAt, key, signer, truncated, cuts }) => {
      const text = truncated ? body.text.slice(0, 1 + (cutAt % (body.text.length - 1))) : body.text;
      const bytes = encoder.encode(text);
      const sig = signBody(SECRETS[signer], bytes, nodeHmacSha256);
      const signature = form === "prefixed" ? `sha256=${sig}` : form === "upper" ? sig.toUpperCase() : sig;
      const at =
        bytes.length < 2
          ? []
          : [...new Set(cuts.map((c) => 1 + (c % (bytes.length - 1))))].sort((a, b) => a - b);
      const bounds = [0, ...at, bytes.length];
      return {
        key,
        signer,
        truncated,
        pieces: bounds.slice(1).map((end, i) => bytes.subarray(bounds[i], end)),
        request: {
          method: "POST",
          target: INBOUND,
          headers: [
            ["X-Api-Key", KEYS[key]],
            ["Content-Type", "application/json"],
            ["X-Partner-Signature", signature],
            ["X-Partner-Event", body.type],
          ],
          body: bytes,
          family: "slow-event",
        },
      };
    });
}

const credentialStep: fc.Arbitrary<SlowStep> = fc.oneof(
  fc
    .tuple(fc.constantFrom<KeyName>("demo", "demo", "fresh"), fc.boolean())
    .map(([key, active]): SlowStep => ({ kind: "key", key, active })),
  fc
    .tuple(fc.constantFrom<SecretName>("demo", "rotated", "fresh"), fc.boolean())
    .map(([secret, active]): SlowStep => ({ kind: "secret", secret, active })),
);

/** Generators of a slow-body run's parts: `slowScenarioOf` takes any of them in place of its own. */
export interface SlowScenarioParts {
  readonly events: fc.Arbitrary<SlowEvent[]>;
  /** Credential changes and other requests, interleaved with the events' heads and pieces. */
  readonly actions: fc.Arbitrary<SlowStep[]>;
  readonly client: fc.Arbitrary<ClientAddress>;
}

/**
 * One to three slow events, their heads and pieces interleaved (each event's in order) with one to
 * four revocations, restorations, rotations to a fresh key or secret, and other generated requests.
 * @example slowScenarioOf({ actions: fc.constant([]) }) // slow bodies alone
 */
export function slowScenarioOf(parts: Partial<SlowScenarioParts> = {}): fc.Arbitrary<SlowScenario> {
  return fc
    .record({
      events: fc.array(slowEventOf(), { minLength: 1, maxLength: 3 }),
      actions: fc.array(
        fc.oneof(
          { weight: 4, arbitrary: credentialStep },
          { weight: 1, arbitrary: fuzzRequest.map((request): SlowStep => ({ kind: "request", request })) },
        ),
        { minLength: 1, maxLength: 4 },
      ),
      client: clientAddress,
      ...parts,
    })
    .chain(({ events, actions, client }) => {
      const owners = [
        ...events.flatMap((e, i) => new Array<number>(1 + e.pieces.length).fill(i)),
        ...actions.map((_, j) => -1 - j),
      ];
      return fc.array(fc.nat(), { minLength: owners.length, maxLength: owners.length }).map((keys) => {
        const order = owners.map((owner, n) => ({ owner, key: keys[n]! })).sort((a, b) => a.key - b.key);
        const next = events.map(() => 0);
        const steps = order.map(({ owner }): SlowStep => {
          if (owner < 0) return actions[-1 - owner]!;
          const n = next[owner]!++;
          return n === 0 ? { kind: "start", event: owner } : { kind: "piece", event: owner, piece: n - 1 };
        });
        return { events, steps, client };
      });
    });
}

/** Sends a slow event: its head, then its body piece by piece. */
interface SlowChannel {
  /** Sends the head: "asked" once the core asked for the body, or the answer when it came first. */
  start(): Promise<"asked" | Answer>;
  /** Sends one piece of the body; after the last, the answer. */
  piece(bytes: Uint8Array, last: boolean): Promise<Answer | undefined>;
  close(): void;
}

/** In process: `handle()` with a body reader that resolves once every piece is in. */
function inProcessChannel(target: FuzzTarget, request: FuzzRequest): SlowChannel {
  const pieces: Uint8Array[] = [];
  let release: (body: Uint8Array) => void = () => undefined;
  const arrived = new Promise<Uint8Array>((resolve) => {
    release = resolve;
  });
  let answer: Promise<Answer> | undefined;
  return {
    start() {
      let asked: () => void = () => undefined;
      const wasAsked = new Promise<"asked">((resolve) => {
        asked = () => resolve("asked");
      });
      const reader = () => {
        asked();
        return arrived;
      };
      answer = target.api.handle({ ...toPlainRequest(request), body: reader });
      return Promise.race([wasAsked, answer]);
    },
    piece(bytes, last) {
      pieces.push(bytes);
      if (!last) return Promise.resolve(undefined);
      release(new Uint8Array(Buffer.concat(pieces)));
      return answer ?? Promise.resolve(undefined);
    },
    close() {},
  };
}

/** Over a socket: the head, then each piece written on its own with a pause after it. */
function socketChannel(
  to: Listening,
  target: FuzzTarget,
  request: FuzzRequest,
  idempotencyKey: string,
): SlowChannel {
  const whole = toBytes(request);
  const head = whole.subarray(0, whole.length - request.body.length);
  const socket = connect(to.port, to.host);
  socket.setNoDelay(true);
  const chunks: Buffer[] = [];
  let settle: (answer: Answer | undefined) => void = () => undefined;
  const answer = new Promise<Answer | undefined>((resolve) => {
    settle = resolve;
  });
  const timer = setTimeout(() => socket.destroy(), 10_000);
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    const parsed = parseResponse(Buffer.concat(chunks), false);
    if (parsed !== undefined) settle(parsed);
  });
  socket.on("error", () => undefined); // writes after an early answer: what arrived is judged
  socket.on("close", () => {
    clearTimeout(timer);
    settle(parseResponse(Buffer.concat(chunks), false));
  });
  const answered = answer.then((a) => {
    if (a === undefined)
      throw new Error(
        `no complete HTTP answer over the socket to a slow event (${Buffer.concat(chunks).length} bytes)`,
      );
    return a;
  });
  return {
    start() {
      const asked = new Promise<"asked">((resolve) => {
        target.bodyAsked.set(idempotencyKey, () => resolve("asked"));
      });
      socket.write(head);
      return Promise.race([asked, answered]).finally(() => target.bodyAsked.delete(idempotencyKey));
    },
    async piece(bytes, last) {
      if (!socket.destroyed) socket.write(bytes);
      await new Promise((resolve) => setTimeout(resolve, 1));
      return last ? answered : undefined;
    },
    close() {
      clearTimeout(timer);
      socket.destroy();
    },
  };
}

/** Puts the model's credentials in the target's stores (the demo partner's keys and secrets). */
function putCredentials(target: FuzzTarget, credentials: Credentials): void {
  const { keys, partners } = target.data;
  const [demoKey, partner] = demoRecords(target);
  keys.put({ ...demoKey, status: credentials.keys.demo ? "active" : "revoked" });
  keys.put({
    keyHash: FRESH_KEY_HASH,
    partnerId: DEMO.partnerId,
    environment: "sandbox",
    status: credentials.keys.fresh ? "active" : "revoked",
    label: "fuzz: a key added while a body arrives",
  });
  const names: SecretName[] = ["demo", "rotated", "fresh"];
  partners.put({
    ...partner,
    signingSecrets: names.filter((n) => credentials.secrets[n]).map((n) => SECRETS[n]),
  });
}

/** The demo key's record and the demo partner as the fixtures hold them. */
function demoRecords(target: FuzzTarget): [ApiKeyRecord, Partner] {
  const demoHash = hashApiKey(DEMO.sandboxApiKey, nodeSha256);
  const key = target.data.keyRecords.find((k) => k.keyHash === demoHash);
  const partner = target.data.partnerList.find((p) => p.id === DEMO.partnerId);
  if (key === undefined || partner === undefined)
    throw new Error("the fixtures lack the demo key or partner");
  const secrets = partner.signingSecrets;
  if (secrets.length !== 2 || secrets[0] !== DEMO.signingSecret || secrets[1] !== DEMO.rotatedSigningSecret)
    throw new Error("the model expects the demo partner's secrets to be the demo and the rotated one");
  return [key, partner];
}

/** The answer the model predicts for a slow event whose body completes now, and why. */
function predict(credentials: Credentials, event: SlowEvent): [string, string] {
  if (!credentials.keys[event.key]) return ["401 invalid_api_key", "key-revoked-meanwhile"];
  if (!credentials.secrets[event.signer]) return ["401 invalid_signature", "secret-revoked-meanwhile"];
  if (event.truncated) return ["400 invalid_json", "truncated"];
  return [
    "200",
    event.signer === "demo" && event.key === "demo"
      ? "accepted"
      : `accepted-${event.key}-key-${event.signer}-secret`,
  ];
}

let slowRuns = 0;

/**
 * Runs one slow-body scenario, in process or (`to`) over a socket, step by step: a head is sent
 * and the run waits until the core asks for its body (or answers: a key revoked before the head is
 * refused then, and counted as a failure); the last piece of a body is sent and its answer awaited
 * before the next step. Each answer must be the model's exactly, with every check of the other
 * runs; a refusal after the body counts nothing in the limiter. The fixtures' credentials are put
 * back at the end.
 * @throws Error naming the event, the answer and the model's expectation when one differs.
 * @example await runSlowScenario(target, fc.sample(slowScenarioOf(), 1)[0]!, new Tally());
 */
export async function runSlowScenario(
  target: FuzzTarget,
  scenario: SlowScenario,
  tally: Tally,
  to?: Listening,
): Promise<void> {
  const credentials: Credentials = {
    keys: { demo: true, fresh: false },
    secrets: { demo: true, rotated: true, fresh: false },
  };
  const run = slowRuns++;
  const keys = scenario.events.map((_, i) => `slow-body:${run}:${i}:`.padEnd(48, "."));
  const requests = scenario.events.map(
    (event, i): FuzzRequest => ({
      ...event.request,
      headers: [...event.request.headers, ["Idempotency-Key", keys[i]!]],
      client: scenario.client,
    }),
  );
  const bucket = to?.bucket ?? scenario.client.bucket;
  const channels: SlowChannel[] = [];
  const refusedAtStart = new Set<number>();
  try {
    for (const step of scenario.steps) {
      switch (step.kind) {
        case "key":
          credentials.keys[step.key] = step.active;
          putCredentials(target, credentials);
          break;
        case "secret":
          credentials.secrets[step.secret] = step.active;
          putCredentials(target, credentials);
          break;
        case "request":
          if (to === undefined) await runInProcess(target, step.request, tally);
          else await runOverSocket(to, target, step.request, tally);
          break;
        case "start": {
          const event = scenario.events[step.event]!;
          const request = requests[step.event]!;
          const channel =
            to === undefined
              ? inProcessChannel(target, request)
              : socketChannel(to, target, request, keys[step.event]!);
          channels[step.event] = channel;
          const before = await storeState(target.events);
          target.limiter.hits.length = 0;
          const started = await channel.start();
          const usable = credentials.keys[event.key];
          if (started === "asked") {
            const hits = target.limiter.hits;
            if (!usable || hits.length !== 1 || !hits[0]!.startsWith("rate:"))
              throw new Error(
                `the core asked for a slow event's body (key ${event.key} ${usable ? "active" : "revoked"}) after limiter hits ${JSON.stringify(hits)}; expected ${usable ? "one rate hit" : "a 401 before the body"}\nscenario: ${describe(scenario)}`,
              );
            break;
          }
          const outcome = checkAnswer(request, started);
          if (usable || outcome !== "401 invalid_api_key")
            fail(
              `answered ${outcome} before its body; the model expected ${usable ? "the body to be read" : "401 invalid_api_key"}\nscenario: ${describe(scenario)}`,
              request,
              started,
            );
          await checkState(request, started, outcome, before, target, target.limiter.hits, true, bucket);
          tally.add({ ...request, family: "slow-event:key-revoked-before-head" }, outcome);
          refusedAtStart.add(step.event);
          break;
        }
        case "piece": {
          const event = scenario.events[step.event]!;
          const request = requests[step.event]!;
          const channel = channels[step.event]!;
          const last = step.piece === event.pieces.length - 1 && !refusedAtStart.has(step.event);
          const before = await storeState(target.events);
          target.limiter.hits.length = 0;
          const answer = await channel.piece(event.pieces[step.piece]!, last);
          if (!last) break;
          if (answer === undefined)
            throw new Error(`no answer to a slow event\nscenario: ${describe(scenario)}`);
          const [expected, why] = predict(credentials, event);
          const outcome = checkAnswer(request, answer);
          if (outcome !== expected)
            fail(
              `answered ${outcome}; the model expected ${expected} (${why}; active when the body completed: ${JSON.stringify(credentials)})\nscenario: ${describe(scenario)}`,
              request,
              answer,
            );
          const none = { auth: 0, byKey: 0, rate: 0 };
          await checkState(request, answer, outcome, before, target, target.limiter.hits, none, bucket);
          if (outcome === "200" && target.events.lastAuthorizedBy?.signingSecret !== SECRETS[event.signer])
            fail(`authorizedBy does not name the ${event.signer} secret that signed`, request, answer);
          tally.add({ ...request, family: `slow-event:${why}` }, outcome);
          break;
        }
      }
    }
  } finally {
    for (const channel of channels) channel?.close();
    const [demoKey, partner] = demoRecords(target);
    target.data.keys.put(demoKey);
    target.data.keys.put({
      keyHash: FRESH_KEY_HASH,
      partnerId: DEMO.partnerId,
      environment: "sandbox",
      status: "revoked",
    });
    target.data.partners.put(partner);
  }
}

/** The scenario's steps in one line, for a failure's message. */
function describe(scenario: SlowScenario): string {
  const events = scenario.events.map(
    (e, i) =>
      `#${i} key ${e.key}, signed ${e.signer}${e.truncated ? ", truncated" : ""}, ${e.pieces.length} pieces`,
  );
  const steps = scenario.steps.map((s) =>
    s.kind === "start"
      ? `head #${s.event}`
      : s.kind === "piece"
        ? `piece ${s.piece} of #${s.event}`
        : s.kind === "request"
          ? `${s.request.method} ${s.request.target.slice(0, 40)}`
          : `${s.kind} ${s.kind === "key" ? s.key : s.secret} ${s.active ? "active" : "revoked"}`,
  );
  return `[${events.join("; ")}] from ${scenario.client.address}: ${steps.join(" → ")}`;
}

/** One step of a fuzz run: a generated request, or now and then a slow-body run. */
export type FuzzStep = { readonly request: FuzzRequest } | { readonly slow: SlowScenario };

/** What both runs draw from: mostly requests, one in 31 a slow-body run. */
export const fuzzStep: fc.Arbitrary<FuzzStep> = fc.oneof(
  { weight: 30, arbitrary: fuzzRequest.map((request) => ({ request })) },
  { weight: 1, arbitrary: slowScenarioOf().map((slow) => ({ slow })) },
);

/**
 * Runs one step in process, or (`to`) over a socket to a server that serves `target`.
 * @example await runStep(target, step, tally); await runStep(target, step, tally, listening);
 */
export function runStep(target: FuzzTarget, step: FuzzStep, tally: Tally, to?: Listening): Promise<void> {
  if ("slow" in step) return runSlowScenario(target, step.slow, tally, to);
  return to === undefined
    ? runInProcess(target, step.request, tally)
    : runOverSocket(to, target, step.request, tally);
}
