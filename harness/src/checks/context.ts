/**
 * What a check sees while it runs: request helpers that authenticate and sign by default,
 * level-aware expectations, the products the target listed, and a seeded random source.
 * @module
 */
import { signBody } from "@partner-yield/core";
import fc from "fast-check";
import type { ReferenceFixtures } from "../fixtures.js";
import type { Exchange, HttpClient, RequestSpec } from "../http/client.js";
import { toCurl } from "../http/curl.js";
import type { Redactor } from "../redact.js";
import type { Evidence, Level, PlanOptions } from "./types.js";

/** Thrown by `t.fail`: the check failed, with evidence. */
export class CheckFailure extends Error {
  override readonly name = "CheckFailure";
  constructor(
    message: string,
    readonly exchanges: readonly Exchange[],
  ) {
    super(message);
  }
}

/** Thrown by `t.skip`: the check could not run here (a missing input, nothing to test against). */
export class CheckSkipped extends Error {
  override readonly name = "CheckSkipped";
}

/** A product as the target listed it, read loosely: a check decides what to demand of it. */
export interface ListedProduct {
  readonly slug: string;
  readonly status: string | undefined;
  readonly assetDecimals: number | undefined;
  readonly assetSymbol: string | undefined;
  readonly serviceFeeBps: number | undefined;
  readonly partnerFeeBps: number | undefined;
  readonly metrics: Record<string, unknown> | null | undefined;
  readonly raw: Record<string, unknown>;
}

/** What the runner learned before the checks: the calling partner's product list. */
export interface Discovery {
  readonly exchange: Exchange;
  /** Undefined when the list could not be read; `reason` says why. */
  readonly products: readonly ListedProduct[] | undefined;
  readonly reason: string | undefined;
}

/** The inputs of a run that checks read. */
export interface CheckInputs {
  readonly level: Level;
  readonly seed: number;
  readonly apiKey: string;
  readonly signingSecret: string | undefined;
  readonly otherEnvApiKey: string | undefined;
  readonly foreignSlug: string | undefined;
  readonly wallet: string | undefined;
  /** The deployment's fixture data (`--fixtures`), the reference of the position math. */
  readonly fixtures: ReferenceFixtures | undefined;
  /** A revoked key of this partner and environment (`--revoked-api-key`). */
  readonly revokedApiKey: string | undefined;
  /** The environment the API key names by its prefix, when it does (CONTRACT §4). */
  readonly environment: "sandbox" | "production" | undefined;
  readonly plan: PlanOptions;
  /** A tag unique to this run, so idempotency keys never collide with an earlier run's. */
  readonly runTag: string;
}

export interface AuthOption {
  /** The API key to send: the run's key by default, `null` for none. */
  readonly key?: string | null;
}

export interface GetOptions extends AuthOption {
  readonly headers?: Readonly<Record<string, string>>;
  readonly unthrottled?: boolean;
}

/** How to sign an event request. */
export type SignatureMode =
  | "valid"
  | "uppercase"
  | "prefixed"
  | "none"
  | { readonly literal: string }
  | { readonly over: string | Uint8Array };

export interface EventRequest extends AuthOption {
  /** The body: an object is serialised with JSON.stringify, a string or bytes are sent as they are. */
  readonly body: unknown;
  /** Default `valid`. */
  readonly signature?: SignatureMode;
  /** Default a fresh key; `null` sends none. */
  readonly idempotencyKey?: string | null;
  /** Default `application/json`; `null` sends none. */
  readonly contentType?: string | null;
  /** Default the body's `event_type`; `null` sends none. */
  readonly eventHeader?: string | null;
}

export const EVENTS_PATH = "/api/partner/webhooks/inbound";
export const PRODUCTS_PATH = "/api/partner/products";

const encoder = new TextEncoder();

export class CheckContext {
  readonly id: string;
  readonly level: Level;
  readonly inputs: CheckInputs;
  readonly discovery: Discovery;
  readonly warnings: string[] = [];
  readonly exchanges: Exchange[] = [];
  readonly #client: HttpClient;
  readonly #seed: number;
  #keyCounter = 0;

  constructor(id: string, inputs: CheckInputs, discovery: Discovery, client: HttpClient) {
    this.id = id;
    this.level = inputs.level;
    this.inputs = inputs;
    this.discovery = discovery;
    this.#client = client;
    this.#seed = checkSeed(inputs.seed, id);
  }

  /** True at level `reference`: assert the CONTRACT decisions too. */
  get reference(): boolean {
    return this.level === "reference";
  }

  /** Every exchange of the run so far, other checks' included (for cross-cutting checks). */
  get allExchanges(): readonly Exchange[] {
    return this.#client.exchanges;
  }

  // ── requests ──────────────────────────────────────────────────────────────────────────────

  async request(spec: RequestSpec): Promise<Exchange> {
    const exchange = await this.#client.send(this.id, spec);
    this.exchanges.push(exchange);
    return exchange;
  }

  /** Sends requests at the same moment (tokens are taken first). */
  async concurrently(specs: readonly RequestSpec[]): Promise<Exchange[]> {
    const exchanges = await this.#client.sendConcurrently(this.id, specs);
    this.exchanges.push(...exchanges);
    return exchanges;
  }

  get(path: string, options: GetOptions = {}): Promise<Exchange> {
    return this.request({
      method: "GET",
      path,
      headers: { ...this.#authHeaders(options), ...(options.headers ?? {}) },
      ...(options.unthrottled ? { unthrottled: true } : {}),
    });
  }

  /** Sends an event to the inbound endpoint, signed and keyed unless told otherwise. */
  postEvent(event: EventRequest): Promise<Exchange> {
    return this.request(this.eventRequest(event));
  }

  /** The request `postEvent` would send. */
  eventRequest(event: EventRequest): RequestSpec {
    const bytes = bodyBytes(event.body);
    const headers: Record<string, string> = { ...this.#authHeaders(event) };
    const contentType = event.contentType === undefined ? "application/json" : event.contentType;
    if (contentType !== null) headers["Content-Type"] = contentType;
    const eventHeader =
      event.eventHeader === undefined
        ? eventTypeOf(event.body)
        : event.eventHeader === null
          ? undefined
          : event.eventHeader;
    if (eventHeader !== undefined) headers["X-Partner-Event"] = eventHeader;
    const signature = this.signature(event.signature ?? "valid", bytes);
    if (signature !== undefined) headers["X-Partner-Signature"] = signature;
    const key = event.idempotencyKey === undefined ? this.newIdempotencyKey() : event.idempotencyKey;
    if (key !== null) headers["Idempotency-Key"] = key;
    return { method: "POST", path: EVENTS_PATH, headers, body: bytes };
  }

  /** The header value for a signature mode over `bytes`. */
  signature(mode: SignatureMode, bytes: Uint8Array): string | undefined {
    if (mode === "none") return undefined;
    if (typeof mode === "object" && "literal" in mode) return mode.literal;
    const secret = this.inputs.signingSecret;
    if (secret === undefined) this.skip("needs the signing secret (PARTNER_SIGNING_SECRET)");
    if (typeof mode === "object") return signBody(secret, bodyBytes(mode.over));
    const valid = signBody(secret, bytes);
    if (mode === "uppercase") return valid.toUpperCase();
    if (mode === "prefixed") return `sha256=${valid}`;
    return valid;
  }

  /** A fresh Idempotency-Key, unique to this run and check. */
  newIdempotencyKey(): string {
    this.#keyCounter++;
    return `conformance-${this.inputs.runTag}-${this.id}-${this.#keyCounter}`;
  }

  /** A valid event body of the given type, its `data` tagged with the run. */
  newEvent(type = "partner.user.created", data: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      event_type: type,
      occurred_at: "2026-11-20T10:15:00Z",
      data: { user_id: `u_${this.inputs.runTag}_${this.#keyCounter + 1}`, ...data },
    };
  }

  #authHeaders(options: AuthOption): Record<string, string> {
    const key = options.key === undefined ? this.inputs.apiKey : options.key;
    return key === null ? {} : { "X-Api-Key": key };
  }

  // ── outcomes ──────────────────────────────────────────────────────────────────────────────

  fail(message: string, ...exchanges: Exchange[]): never {
    throw new CheckFailure(message, exchanges.length > 0 ? exchanges : this.exchanges.slice(-1));
  }

  /** Fails with `message` unless `condition` holds. */
  check(condition: unknown, message: string, ...exchanges: Exchange[]): asserts condition {
    if (!condition) this.fail(message, ...exchanges);
  }

  skip(reason: string): never {
    throw new CheckSkipped(reason);
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  // ── reading responses ─────────────────────────────────────────────────────────────────────

  /** The status, failing the check on a transport error. */
  status(exchange: Exchange): number {
    if (exchange.response === undefined)
      this.fail(`no response: ${exchange.error ?? "unknown error"}`, exchange);
    return exchange.response.status;
  }

  /** The parsed JSON body, failing the check when it is not JSON. */
  json(exchange: Exchange): unknown {
    this.status(exchange);
    const text = exchange.response!.text;
    try {
      return JSON.parse(text);
    } catch {
      this.fail(`response body is not JSON: ${excerpt(text, 120)}`, exchange);
    }
  }

  header(exchange: Exchange, name: string): string | undefined {
    return exchange.response?.headers[name.toLowerCase()];
  }

  /**
   * A successful response (interface.md §4): HTTP 200, a JSON body with `success: true`.
   * Returns the body.
   */
  expectOk(exchange: Exchange, what: string): Record<string, unknown> {
    const status = this.status(exchange);
    if (status !== 200)
      this.fail(`${what}: expected HTTP 200, got ${status}${codeSuffix(exchange)}`, exchange);
    const body = this.json(exchange);
    this.check(isRecord(body), `${what}: body is not a JSON object`, exchange);
    this.check(
      body["success"] === true,
      `${what}: expected "success": true, got ${JSON.stringify(body["success"])}`,
      exchange,
    );
    return body;
  }

  /**
   * A refused request. At level `spec` any 4xx will do (interface.md shows no status codes);
   * at `reference` the exact status and problem `code` of CONTRACT §6.
   */
  expectRefused(
    exchange: Exchange,
    what: string,
    expected: { status: number; code: string | readonly string[] },
    /** Earlier requests the failure depends on (shown as evidence, first). */
    before: readonly Exchange[] = [],
  ): void {
    const status = this.status(exchange);
    if (status >= 500)
      this.fail(`${what}: expected a 4xx refusal, got a server error ${status}`, ...before, exchange);
    if (status < 400) this.fail(`${what}: expected a refusal, got ${status}`, ...before, exchange);
    if (!this.reference) return;
    const codes = typeof expected.code === "string" ? [expected.code] : expected.code;
    const want = `${expected.status} ${codes.join(" or ")}`;
    const code = problemCode(exchange);
    if (status !== expected.status || code === undefined || !codes.includes(code)) {
      this.fail(
        `${what}: expected ${want}, got ${status}${code === undefined ? " (no problem code)" : " " + code}`,
        ...before,
        exchange,
      );
    }
  }

  // ── target ────────────────────────────────────────────────────────────────────────────────

  /** The calling partner's products as listed, or skip when the list could not be read. */
  products(): readonly ListedProduct[] {
    const { products, reason } = this.discovery;
    if (products === undefined)
      this.skip(`the product list could not be read: ${reason ?? "unknown reason"}`);
    if (products.length === 0) this.skip("the target lists no products for this partner");
    return products;
  }

  /** The first listed product matching `predicate`, or skip saying what was missing. */
  product(predicate: (p: ListedProduct) => boolean, description: string): ListedProduct {
    const found = this.products().find(predicate);
    if (found === undefined) this.skip(`the target lists no ${description}`);
    return found;
  }

  /** Seeded samples from an arbitrary: the same seed and check ID give the same values. */
  sample<T>(arbitrary: fc.Arbitrary<T>, count: number, salt = 0): T[] {
    return fc.sample(arbitrary, { seed: this.#seed + salt, numRuns: count });
  }

  /** Seeded random bytes (for keys and wallets that must not exist). */
  randomBytes(length: number, salt = 0): Uint8Array {
    return this.sample(fc.uint8Array({ minLength: length, maxLength: length }), 1, salt)[0]!;
  }

  /** A seeded random wallet address, all lowercase: one that holds nothing. */
  randomWallet(salt = 0): string {
    return `0x${[...this.randomBytes(20, salt)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  }

  // ── evidence ──────────────────────────────────────────────────────────────────────────────

  static evidence(exchange: Exchange, redactor: Redactor, signingSecret: string | undefined): Evidence {
    const req = exchange.request;
    // The path as sent, base URL prefix included (a misconfigured base URL shows in the evidence).
    const requestLines = [`${req.method} ${req.url.replace(/^[a-z]+:\/\/[^/]+/i, "")}`];
    for (const [name, value] of Object.entries(req.headers)) requestLines.push(`${name}: ${value}`);
    if (req.body !== undefined) requestLines.push("", excerpt(new TextDecoder().decode(req.body), 400));
    let response: string;
    if (exchange.response === undefined) response = `(no response: ${exchange.error ?? "unknown"})`;
    else {
      const lines = [`HTTP ${exchange.response.status}`];
      for (const [name, value] of Object.entries(exchange.response.headers)) {
        if (INTERESTING_HEADERS.has(name)) lines.push(`${name}: ${value}`);
      }
      lines.push("", excerpt(exchange.response.text, 600));
      response = lines.join("\n");
    }
    return {
      request: redactor.redact(requestLines.join("\n")),
      response: redactor.redact(response),
      curl: toCurl(req, { redactor, signingSecret }),
    };
  }
}

const INTERESTING_HEADERS = new Set([
  "content-type",
  "allow",
  "retry-after",
  "ratelimit",
  "ratelimit-policy",
  "idempotent-replayed",
  "x-request-id",
  "cache-control",
  "x-content-type-options",
]);

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The problem `code` of an error response, if its body is JSON with one. */
export function problemCode(exchange: Exchange): string | undefined {
  const text = exchange.response?.text;
  if (text === undefined) return undefined;
  try {
    const body: unknown = JSON.parse(text);
    return isRecord(body) && typeof body["code"] === "string" ? body["code"] : undefined;
  } catch {
    return undefined;
  }
}

function codeSuffix(exchange: Exchange): string {
  const code = problemCode(exchange);
  return code === undefined ? "" : ` ${code}`;
}

export function excerpt(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

function bodyBytes(body: unknown): Uint8Array {
  if (body instanceof Uint8Array) return body;
  if (typeof body === "string") return encoder.encode(body);
  return encoder.encode(JSON.stringify(body));
}

function eventTypeOf(body: unknown): string | undefined {
  let value: unknown = body;
  if (typeof body === "string" || body instanceof Uint8Array) {
    try {
      value = JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body));
    } catch {
      return "partner.user.created";
    }
  }
  return isRecord(value) && typeof value["event_type"] === "string"
    ? value["event_type"]
    : "partner.user.created";
}

/** A 31-bit seed per check, from the run's seed and the check's ID (FNV-1a). */
export function checkSeed(seed: number, id: string): number {
  let hash = 0x811c9dc5 ^ (seed | 0);
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash & 0x7fffffff;
}

/** `/api/partner/products/{slug}` with the slug percent-encoded. */
export function productPath(slug: string): string {
  return `${PRODUCTS_PATH}/${encodeURIComponent(slug)}`;
}

export function positionPath(slug: string, address: string | undefined): string {
  return `${productPath(slug)}/position${address === undefined ? "" : `?address=${encodeURIComponent(address)}`}`;
}

export function yieldPath(slug: string, amount: string | undefined): string {
  return `${productPath(slug)}/yield-calc${amount === undefined ? "" : `?amount=${encodeURIComponent(amount)}`}`;
}
