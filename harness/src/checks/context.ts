/**
 * What a check sees while it runs: request helpers that authenticate and sign by default,
 * level-aware expectations, the products the target listed, and a seeded random source.
 * @module
 */
import fc from "fast-check";
import type { Exchange, HttpClient, RequestSpec } from "../http/client.js";
import { toCurl } from "../http/curl.js";
import { hmacHex } from "../http/signature.js";
import type { ReferenceFixtures } from "../oracle/fixtures.js";
import type { Redactor } from "../redact.js";
import type { Evidence, FailureKind, Level, PlanOptions } from "./types.js";

/** Thrown by `t.fail`: the check failed, with evidence. */
export class CheckFailure extends Error {
  override readonly name = "CheckFailure";
  constructor(
    message: string,
    readonly exchanges: readonly Exchange[],
    readonly kind: FailureKind,
  ) {
    super(message);
  }
}

/** Thrown by `t.skip`: the check could not run here (a missing input, nothing to test against). */
export class CheckSkipped extends Error {
  override readonly name = "CheckSkipped";
}

/**
 * Thrown by `t.warning`: the check ran but cannot pass: it is inconclusive, or found something
 * that is not a failure of the rule (a 413 only after the whole body: a buffering proxy).
 */
export class CheckWarning extends Error {
  override readonly name = "CheckWarning";
  constructor(
    message: string,
    readonly exchanges: readonly Exchange[],
  ) {
    super(message);
  }
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

/** How a target refuses something: its status and the error label of its body, if any. */
export interface RefusalShape {
  readonly status: number;
  readonly label: string | undefined;
}

/** What the signing preflight learned (see `preflight.ts`). */
export interface SigningProbe {
  /** How the target answers an event signed with a wrong secret. */
  readonly badSignature: RefusalShape | undefined;
  /** Set when the target refused the preflight's well-formed, correctly signed event for another reason. */
  readonly eventRefusal: string | undefined;
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
  /** Set when the signing preflight ran. */
  readonly signing: SigningProbe | undefined;
  /** The per-request timeout (`--timeout`), for checks that wait on an answer. */
  readonly timeoutMs?: number;
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
  | { readonly over: string | Uint8Array }
  | { readonly secret: string };

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

export interface RefusalExpectation {
  readonly status: number;
  readonly code: string | readonly string[];
}

export const EVENTS_PATH = "/api/partner/webhooks/inbound";
export const PRODUCTS_PATH = "/api/partner/products";

const encoder = new TextEncoder();

export class CheckContext {
  readonly id: string;
  readonly level: Level;
  readonly inputs: CheckInputs;
  readonly discovery: Discovery;
  readonly notes: string[] = [];
  readonly exchanges: Exchange[] = [];
  readonly #client: HttpClient;
  readonly #seed: number;
  readonly #failure: FailureKind;
  /** Requests carrying a correct signature over their exact body. */
  readonly #validlySigned = new WeakSet<RequestSpec>();
  readonly #signedExchanges = new WeakSet<Exchange>();
  #keyCounter = 0;

  constructor(
    id: string,
    inputs: CheckInputs,
    discovery: Discovery,
    client: HttpClient,
    failure: FailureKind = "value",
  ) {
    this.id = id;
    this.level = inputs.level;
    this.inputs = inputs;
    this.discovery = discovery;
    this.#client = client;
    this.#seed = checkSeed(inputs.seed, id);
    this.#failure = failure;
  }

  /** True at level `reference`: assert the CONTRACT decisions too. */
  get reference(): boolean {
    return this.level === "reference";
  }

  // ── requests ──────────────────────────────────────────────────────────────────────────────

  async request(spec: RequestSpec): Promise<Exchange> {
    const exchange = await this.#client.send(this.id, spec);
    if (this.#validlySigned.has(spec)) this.#signedExchanges.add(exchange);
    this.exchanges.push(exchange);
    return exchange;
  }

  /** Sends requests at the same moment (tokens are taken first). */
  async concurrently(specs: readonly RequestSpec[]): Promise<Exchange[]> {
    const exchanges = await this.#client.sendConcurrently(this.id, specs);
    for (const [i, exchange] of exchanges.entries())
      if (this.#validlySigned.has(specs[i]!)) this.#signedExchanges.add(exchange);
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
    const mode = event.signature ?? "valid";
    const signature = this.signature(mode, bytes);
    if (signature !== undefined) headers["X-Partner-Signature"] = signature;
    const key = event.idempotencyKey === undefined ? this.newIdempotencyKey() : event.idempotencyKey;
    if (key !== null) headers["Idempotency-Key"] = key;
    const spec: RequestSpec = { method: "POST", path: EVENTS_PATH, headers, body: bytes };
    if (mode === "valid" || mode === "uppercase" || mode === "prefixed") this.#validlySigned.add(spec);
    return spec;
  }

  /** The header value for a signature mode over `bytes`. */
  signature(mode: SignatureMode, bytes: Uint8Array): string | undefined {
    if (mode === "none") return undefined;
    if (typeof mode === "object" && "literal" in mode) return mode.literal;
    if (typeof mode === "object" && "secret" in mode) return hmacHex(mode.secret, bytes);
    const secret = this.inputs.signingSecret;
    if (secret === undefined) this.skip("needs the signing secret (PARTNER_SIGNING_SECRET)");
    if (typeof mode === "object") return hmacHex(secret, bodyBytes(mode.over));
    const valid = hmacHex(secret, bytes);
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

  /** Fails with the check's own failure kind. */
  fail(message: string, ...exchanges: Exchange[]): never {
    return this.failWith(this.#failure, message, ...exchanges);
  }

  failWith(kind: FailureKind, message: string, ...exchanges: Exchange[]): never {
    throw new CheckFailure(message, exchanges.length > 0 ? exchanges : this.exchanges.slice(-1), kind);
  }

  /** Fails with `message` (the check's own failure kind) unless `condition` holds. */
  check(condition: unknown, message: string, ...exchanges: Exchange[]): asserts condition {
    if (!condition) this.fail(message, ...exchanges);
  }

  checkWith(
    kind: FailureKind,
    condition: unknown,
    message: string,
    ...exchanges: Exchange[]
  ): asserts condition {
    if (!condition) this.failWith(kind, message, ...exchanges);
  }

  skip(reason: string): never {
    throw new CheckSkipped(reason);
  }

  /** Ends the check with status `warning`: inconclusive, or a finding that is not a failure. */
  warning(message: string, ...exchanges: Exchange[]): never {
    throw new CheckWarning(message, exchanges);
  }

  /** A remark on a check that goes on (it may still pass). */
  note(message: string): void {
    if (!this.notes.includes(message)) this.notes.push(message);
  }

  // ── reading responses ─────────────────────────────────────────────────────────────────────

  /** The status, failing the check on a transport error. */
  status(exchange: Exchange): number {
    if (exchange.response === undefined)
      this.failWith("transport", `no response: ${exchange.error ?? "unknown error"}`, exchange);
    return exchange.response.status;
  }

  /** The parsed JSON body, failing the check when it is not JSON. */
  json(exchange: Exchange): unknown {
    this.status(exchange);
    const text = exchange.response!.text;
    try {
      return JSON.parse(text);
    } catch {
      this.failWith("not_json", `response body is not JSON: ${excerpt(text, 120)}`, exchange);
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
    if (status >= 500)
      this.failWith("server_error", `${what}: server error ${status}${codeSuffix(exchange)}`, exchange);
    if (status !== 200)
      this.failWith("status", `${what}: expected HTTP 200, got ${status}${codeSuffix(exchange)}`, exchange);
    const body = this.json(exchange);
    this.checkWith("schema", isRecord(body), `${what}: body is not a JSON object`, exchange);
    this.checkWith(
      "schema",
      body["success"] === true,
      `${what}: expected "success": true, got ${JSON.stringify(body["success"])}`,
      exchange,
    );
    return body;
  }

  /**
   * A refused request. At level `spec` interface.md shows no status codes and no error body, so
   * a refusal is any 4xx, or any other non-5xx answer whose JSON body says `"success": false`;
   * at `reference`, the exact status and problem `code` of CONTRACT §6.
   */
  expectRefused(
    exchange: Exchange,
    what: string,
    expected: RefusalExpectation,
    /** Earlier requests the failure depends on (shown as evidence, first). */
    before: readonly Exchange[] = [],
  ): void {
    const status = this.status(exchange);
    if (status >= 500)
      this.failWith(
        "server_error",
        `${what}: expected a refusal, got a server error ${status}`,
        ...before,
        exchange,
      );
    if (!isRefusal(exchange))
      this.failWith("status", `${what}: expected a refusal, got ${status}`, ...before, exchange);
    const codes = typeof expected.code === "string" ? [expected.code] : expected.code;
    if (!this.reference) {
      this.#guardEventRefusal(exchange, what);
      this.#guardSignature(exchange, what, codes);
      return;
    }
    const want = `${expected.status} ${codes.join(" or ")}`;
    const code = problemCode(exchange);
    const got = `${status}${code === undefined ? " (no problem code)" : ` ${code}`}`;
    if (status !== expected.status)
      this.failWith("status", `${what}: expected ${want}, got ${got}`, ...before, exchange);
    if (code === undefined || !codes.includes(code))
      this.failWith("error_code", `${what}: expected ${want}, got ${got}`, ...before, exchange);
  }

  /**
   * At level `spec` the refusal's reason cannot be read from a code. A correctly signed request
   * refused exactly as a wrong signature is may have been refused for its signature, not for what
   * the check tests: never a pass (CONTRACT-free reading of interface.md §5.5).
   */
  #guardSignature(exchange: Exchange, what: string, codes: readonly string[]): void {
    const bad = this.inputs.signing?.badSignature;
    if (bad === undefined || codes.includes("invalid_signature") || !this.#signedExchanges.has(exchange))
      return;
    const shape = refusalShape(exchange);
    if (shape.status === bad.status && shape.label === bad.label) {
      this.warning(
        `${what}: inconclusive: the target refused it (HTTP ${shape.status}${shape.label ? ` ${shape.label}` : ""}) ` +
          "exactly as it refuses a wrong signature, so the refusal may be for the signature, not for what this check tests",
        exchange,
      );
    }
  }

  /**
   * When the signing preflight saw the target refuse even a correctly signed, well-formed event
   * (interface.md §6 leaves the content of `data` open), an event refused at level `spec` proves
   * nothing about the rule a check tests: inconclusive, never a pass.
   */
  #guardEventRefusal(exchange: Exchange, what: string): void {
    const refusal = this.inputs.signing?.eventRefusal;
    if (refusal === undefined || exchange.request.path !== EVENTS_PATH) return;
    if (exchange.request.headers["X-Api-Key"] !== this.inputs.apiKey) return;
    this.warning(
      `${what}: inconclusive: the target refuses even a correctly signed, well-formed event (${refusal}), so this refusal need not be about what this check tests`,
      exchange,
    );
  }

  /** True when a correctly signed request of this check was answered as a wrong signature is. */
  refusedAsBadSignature(exchange: Exchange): boolean {
    const bad = this.inputs.signing?.badSignature;
    if (bad === undefined || !this.#signedExchanges.has(exchange)) return false;
    const shape = refusalShape(exchange);
    return shape.status === bad.status && shape.label === bad.label;
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
    return `0x${hex(this.randomBytes(20, salt))}`;
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
      // Every header the response carried (a check may judge any: a leaking X-Debug-Key, a CORS
      // header), but the connection's own bookkeeping.
      for (const [name, value] of Object.entries(exchange.response.headers)) {
        if (!CONNECTION_HEADERS.has(name)) lines.push(`${name}: ${value}`);
      }
      if (exchange.response.cut !== undefined)
        lines.push(`(the body was cut short: ${exchange.response.cut})`);
      lines.push("", excerpt(exchange.response.text, 600));
      response = lines.join("\n");
    }
    const curl = toCurl(req, { redactor, signingSecret });
    return {
      request: redactor.redact(requestLines.join("\n")),
      response: redactor.redact(response),
      // A streamed body is not kept: stream as many bytes again, chunked (curl reads stdin to the end).
      curl:
        exchange.stream === undefined
          ? curl
          : `# the body was ${exchange.stream.bytes} bytes, streamed without Content-Length\n` +
            `head -c ${exchange.stream.bytes} /dev/zero | tr '\\0' x | ${curl} -H 'Transfer-Encoding: chunked' --data-binary @-`,
    };
  }
}

/** Headers of the connection, not of the answer: left out of the evidence. */
const CONNECTION_HEADERS = new Set(["date", "connection", "keep-alive"]);

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The parsed JSON body of a response, or undefined. */
export function bodyOf(exchange: Exchange): unknown {
  const text = exchange.response?.text;
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The problem `code` of an error response, if its body is JSON with one. */
export function problemCode(exchange: Exchange): string | undefined {
  const body = bodyOf(exchange);
  return isRecord(body) && typeof body["code"] === "string" ? body["code"] : undefined;
}

/**
 * A refusal as interface.md allows it to look (its §7 shows no status and no body): a 4xx, or any
 * non-5xx answer whose JSON body says `"success": false`.
 */
export function isRefusal(exchange: Exchange): boolean {
  const status = exchange.response?.status;
  if (status === undefined || status >= 500) return false;
  if (status >= 400) return true;
  const body = bodyOf(exchange);
  return isRecord(body) && body["success"] === false;
}

/**
 * The status and the error label of a refusal, whatever its envelope: `code`, `error.code`,
 * `error` (a string), `type`, `title` or `message`, the first that is a string.
 */
export function refusalShape(exchange: Exchange): RefusalShape {
  const body = bodyOf(exchange);
  let label: string | undefined;
  if (isRecord(body)) {
    const error = body["error"];
    for (const value of [
      body["code"],
      isRecord(error) ? error["code"] : error,
      body["type"],
      body["title"],
      body["message"],
    ]) {
      if (typeof value === "string") {
        label = value;
        break;
      }
    }
  }
  return { status: exchange.response?.status ?? 0, label };
}

function codeSuffix(exchange: Exchange): string {
  const label = refusalShape(exchange).label;
  return label === undefined ? "" : ` ${label}`;
}

export function excerpt(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

export function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
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
