/**
 * The partner API as one pure entry point: `handle(request) → response` (CONTRACT §3–§9).
 * No sockets, no framework: adapters translate to and from `PlainRequest` / `PlainResponse`.
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { type Environment, hashApiKey, parseApiKey } from "../auth/api-key.js";
import {
  type HmacPort,
  nobleHmacSha256,
  parseSignatureHeader,
  SignatureVerifier,
  toHex,
} from "../auth/signature.js";
import { canonicalJson, MAX_JSON_DEPTH } from "../encoding/canonical-json.js";
import { parseAddress } from "../evm/address.js";
import { formatUnits, parseAmount } from "../math/decimal.js";
import { findInexactNumber, MAX_EXACT_SIGNIFICANT_DIGITS } from "../math/exact-numbers.js";
import { netApy, quoteYield, RATE_DECIMALS, usdValueCents } from "../math/yield-math.js";
import { type EventStore, MemoryEventStore } from "../stores/event-store.js";
import type { Partner } from "../stores/partner-store.js";
import type { ProductRecord } from "../stores/product-source.js";
import { MemoryRateLimiter, type RateDecision } from "../stores/rate-limiter.js";
import { StoreUnavailableError } from "../stores/store-errors.js";
import { BodyTooLargeError, InvalidBodyError } from "./body.js";
import { ApiError, problemBody } from "./errors.js";
import { buildOpenApiDocument } from "./openapi.js";
import type { PartnerApiOptions } from "./partner-api-options.js";
import type { PartnerApiHandler, PlainRequest, PlainResponse } from "./plain-request.js";
import { IDEMPOTENCY_KEY_PATTERN, PartnerEvent, SLUG_PATTERN } from "./schemas.js";

export interface PartnerApi extends PartnerApiHandler {
  readonly environment: Environment;
  /** The event store in use (the default memory one unless given). */
  readonly events: EventStore;
  /** True while the instance accepts traffic; false after `close()`. */
  ready(): Promise<boolean>;
  /** Closes every store and source that has a `close`. Call after requests in flight finished. */
  close(): Promise<void>;
}

const DEFAULT_RATE_LIMITS: Readonly<Record<Environment, number>> = { production: 1000, sandbox: 100 };
const WINDOW_MS = 60_000;
const PREFIX = "/api/partner";
const JSON_CONTENT_TYPE = /^application\/json[ \t]*(;[ \t]*charset[ \t]*=[ \t]*(utf-8|"utf-8")[ \t]*)?$/i;

const BASE_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
} as const;

type RouteName = "listProducts" | "getProduct" | "position" | "yieldCalc" | "inboundEvent" | "openapi";

interface Route {
  readonly name: RouteName;
  readonly slug?: string;
  readonly allow: string;
}

/** Routing comes first (CONTRACT §9): unknown path → 404, wrong method → 405 with Allow. */
function matchRoute(path: string): Route | undefined {
  if (!path.startsWith(PREFIX)) return undefined;
  const rest = path.slice(PREFIX.length);
  if (rest === "/products") return { name: "listProducts", allow: "GET, HEAD" };
  if (rest === "/webhooks/inbound") return { name: "inboundEvent", allow: "POST" };
  if (rest === "/openapi.json") return { name: "openapi", allow: "GET, HEAD" };
  if (!rest.startsWith("/products/")) return undefined;
  const parts = rest.slice("/products/".length).split("/");
  const slug = parts[0]!;
  if (slug === "") return undefined;
  if (parts.length === 1) return { name: "getProduct", slug, allow: "GET, HEAD" };
  if (parts.length === 2 && parts[1] === "position") return { name: "position", slug, allow: "GET, HEAD" };
  if (parts.length === 2 && parts[1] === "yield-calc") return { name: "yieldCalc", slug, allow: "GET, HEAD" };
  return undefined;
}

/** Per-request state that shapes every response, error or not. */
interface Context {
  readonly requestId: string;
  readonly head: boolean;
  rateHeaders: Record<string, string> | undefined;
}

/**
 * Creates the API. All stores are ports (see `PartnerApiOptions`).
 *
 * @example
 * const data = loadFixtures(files);
 * const api = createPartnerApi({ environment: "sandbox", ...data });
 * const res = await api.handle({ method: "GET", path: "/api/partner/products", headers: { "x-api-key": key } });
 */
export function createPartnerApi(options: PartnerApiOptions): PartnerApi {
  const environment = options.environment;
  const events = options.events ?? new MemoryEventStore();
  const limiter = options.rateLimiter ?? new MemoryRateLimiter();
  const hmac: HmacPort = options.hmac ?? nobleHmacSha256;
  const sha256 = options.sha256 ?? nobleSha256;
  const bodyLimit = options.bodyLimitBytes ?? 65_536;
  const failedAuthLimit = options.failedAuthPerMinute ?? 30;
  const defaultLimits = options.defaultRateLimits ?? DEFAULT_RATE_LIMITS;
  const nextRequestId = options.generateRequestId ?? requestIdGenerator();
  const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const encoder = new TextEncoder();
  let open = true;

  // Serialised resources, computed once per record: the list and get endpoints only concatenate.
  const productJson = new WeakMap<ProductRecord, string>();
  const verifiers = new Map<string, SignatureVerifier>();
  let openApiJson: string | undefined;

  function serialiseProduct(record: ProductRecord): string {
    let json = productJson.get(record);
    if (json === undefined) {
      json = JSON.stringify(toProductResource(record));
      productJson.set(record, json);
    }
    return json;
  }

  function verifierFor(partner: Partner): SignatureVerifier {
    const cacheKey = partner.signingSecrets.join("\n");
    let verifier = verifiers.get(cacheKey);
    if (verifier === undefined) {
      if (verifiers.size > 1000) verifiers.clear();
      verifier = new SignatureVerifier(partner.signingSecrets, hmac);
      verifiers.set(cacheKey, verifier);
    }
    return verifier;
  }

  function respond(
    ctx: Context,
    status: number,
    body: string,
    extra?: Record<string, string>,
  ): PlainResponse {
    const headers: Record<string, string> = {
      "content-type":
        status >= 400 ? "application/problem+json; charset=utf-8" : "application/json; charset=utf-8",
      "x-request-id": ctx.requestId,
      ...BASE_HEADERS,
      ...ctx.rateHeaders,
      ...extra,
    };
    if (!ctx.head) return { status, headers, body };
    // HEAD is GET without the body (CONTRACT §9): same headers, so the length GET would send.
    headers["content-length"] = String(encoder.encode(body).byteLength);
    return { status, headers, body: null };
  }

  function errorResponse(ctx: Context, error: ApiError): PlainResponse {
    return respond(ctx, error.status, JSON.stringify(problemBody(error, ctx.requestId)), {
      ...error.headers,
    });
  }

  async function authenticate(req: PlainRequest): Promise<Partner> {
    const address = req.clientAddress;
    const authKey = address === undefined ? undefined : `auth:${address}`;
    if (authKey !== undefined) {
      const blocked = await limiter.peek(authKey, failedAuthLimit, WINDOW_MS);
      if (!blocked.allowed) throw failedAuthLimited(blocked.retryAfterSeconds);
    }
    // Counting a failure is one atomic step of the limiter: a failure past the limit is answered 429
    // even when concurrent guesses all passed the peek above (a shared limiter such as Redis).
    const fail = async (error: ApiError): Promise<never> => {
      if (authKey !== undefined) {
        const counted = await limiter.hit(authKey, failedAuthLimit, WINDOW_MS);
        if (!counted.allowed) throw failedAuthLimited(counted.retryAfterSeconds);
      }
      throw error;
    };
    const key = req.headers["x-api-key"];
    if (key === undefined || key === "")
      throw new ApiError("missing_api_key", "the X-Api-Key header is required");
    const parsed = parseApiKey(key);
    if (!parsed.ok) return fail(new ApiError("invalid_api_key", "the API key is malformed or unknown"));
    if (parsed.environment !== environment) {
      return fail(
        new ApiError(
          "wrong_environment",
          `this is a ${parsed.environment} key; this server is the ${environment} environment`,
        ),
      );
    }
    const record = await options.keys.findByHash(hashApiKey(key, sha256));
    if (record === undefined || record.status !== "active" || record.environment !== environment) {
      return fail(new ApiError("invalid_api_key", "the API key is unknown or revoked"));
    }
    const partner = await options.partners.getPartner(record.partnerId);
    if (partner === undefined)
      return fail(new ApiError("invalid_api_key", "the API key is unknown or revoked"));
    return partner;
  }

  async function enforceRateLimit(ctx: Context, partner: Partner): Promise<void> {
    const quota =
      options.rateLimitOverride ?? partner.rateLimits?.[environment] ?? defaultLimits[environment];
    const decision = await limiter.hit(`rate:${partner.id}:${environment}`, quota, WINDOW_MS);
    ctx.rateHeaders = rateLimitHeaders(environment, decision);
    if (!decision.allowed) {
      throw new ApiError("rate_limited", `rate limit of ${quota} requests per 60 seconds exceeded`, {
        headers: { "retry-after": String(decision.retryAfterSeconds) },
      });
    }
  }

  async function findProduct(partner: Partner, slug: string): Promise<ProductRecord> {
    // CONTRACT §3: another partner's slug is indistinguishable from an unknown one (never 403).
    const product = SLUG_PATTERN.test(slug) ? await options.products.getProduct(partner.id, slug) : undefined;
    if (product === undefined) throw new ApiError("product_not_found", "no product with this slug");
    return product;
  }

  async function position(
    ctx: Context,
    req: PlainRequest,
    partner: Partner,
    slug: string,
  ): Promise<PlainResponse> {
    const product = await findProduct(partner, slug);
    const raw = singleParam(parseQuery(req.query), "address");
    if (raw === undefined)
      throw fieldError("invalid_address", "address", "the address query parameter is required");
    const parsed = parseAddress(raw);
    if (!parsed.ok) throw fieldError("invalid_address", "address", parsed.reason);
    const holding = await options.positions.getHolding(product, parsed.address);
    let usd = 0n;
    if (holding.assets > 0n) {
      const price = await options.prices.getUsdPriceWad(product);
      if (price === undefined) {
        throw new StoreUnavailableError(`no USD price is available for ${product.assetSymbol}`, 60);
      }
      usd = usdValueCents(holding.assets, product.assetDecimals, price);
    }
    const data = {
      wallet_address: parsed.address,
      product_slug: product.slug,
      shares: formatUnits(holding.shares, product.assetDecimals + product.decimalsOffset),
      assets: formatUnits(holding.assets, product.assetDecimals),
      usd_value: formatUnits(usd, 2),
    };
    return respond(ctx, 200, JSON.stringify({ success: true, data }));
  }

  async function yieldCalc(
    ctx: Context,
    req: PlainRequest,
    partner: Partner,
    slug: string,
  ): Promise<PlainResponse> {
    const product = await findProduct(partner, slug);
    const raw = singleParam(parseQuery(req.query), "amount");
    if (raw === undefined)
      throw fieldError("invalid_amount", "amount", "the amount query parameter is required");
    const amount = parseAmount(raw, product.assetDecimals, product.assetSymbol);
    if (!amount.ok) throw fieldError("invalid_amount", "amount", amount.reason);
    if (product.status !== "active") {
      throw new ApiError(
        "product_not_active",
        `product is ${product.status}; yield is quoted for active products only`,
      );
    }
    if (product.metrics === null) throw new ApiError("metrics_unavailable", "product has no metrics yet");
    const data = quoteYield({
      amountUnits: amount.units,
      assetDecimals: product.assetDecimals,
      underlyingApyWad: product.metrics.underlyingApyWad,
      serviceFeeBps: product.serviceFeeBps,
      partnerFeeBps: product.partnerFeeBps,
    });
    return respond(ctx, 200, JSON.stringify({ success: true, data }));
  }

  async function inboundEvent(ctx: Context, req: PlainRequest, partner: Partner): Promise<PlainResponse> {
    // CONTRACT §5, in order: body size → content type → signature → idempotency key → JSON → schema
    // → header match → idempotency. Nothing is stored before the last step.
    const body = await readBody(req, bodyLimit);
    const contentType = req.headers["content-type"];
    if (contentType === undefined || !JSON_CONTENT_TYPE.test(contentType.trim())) {
      throw new ApiError("unsupported_media_type", "Content-Type must be application/json (charset utf-8)");
    }
    const signatureHeader = req.headers["x-partner-signature"];
    if (signatureHeader === undefined || signatureHeader === "") {
      throw new ApiError("invalid_signature", "the X-Partner-Signature header is required");
    }
    const signature = parseSignatureHeader(signatureHeader);
    if (signature === null) {
      throw new ApiError(
        "invalid_signature",
        "X-Partner-Signature must be 64 hexadecimal digits (HMAC-SHA256)",
      );
    }
    if (!verifierFor(partner).verify(body, signature)) {
      throw new ApiError("invalid_signature", "X-Partner-Signature does not match the raw request body");
    }
    const idempotencyKey = req.headers["idempotency-key"];
    if (idempotencyKey === undefined || idempotencyKey === "") {
      throw new ApiError("missing_idempotency_key", "the Idempotency-Key header is required");
    }
    if (!IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
      throw new ApiError(
        "invalid_idempotency_key",
        "Idempotency-Key must be 1 to 255 visible ASCII characters",
      );
    }
    let text: string;
    let parsed: unknown;
    try {
      text = utf8.decode(body);
      parsed = JSON.parse(text);
    } catch {
      throw new ApiError("invalid_json", "the request body is not valid UTF-8 JSON");
    }
    const result = PartnerEvent.safeParse(parsed);
    if (!result.success) {
      const errors = result.error.issues.flatMap((issue) => {
        const base = `/body${issue.path.map((p) => `/${escapePointer(String(p))}`).join("")}`;
        if (issue.code === "unrecognized_keys") {
          return issue.keys.map((k) => ({ pointer: `${base}/${escapePointer(k)}`, detail: "unknown field" }));
        }
        return [{ pointer: base, detail: issue.message }];
      });
      throw new ApiError("invalid_event", "the event does not match the schema", { errors });
    }
    let canonical: string;
    try {
      canonical = canonicalJson(parsed);
    } catch {
      throw new ApiError("invalid_event", `the event nests deeper than ${MAX_JSON_DEPTH} levels`, {
        errors: [{ pointer: "/body/data", detail: `nesting deeper than ${MAX_JSON_DEPTH} levels` }],
      });
    }
    const inexact = findInexactNumber(text);
    if (inexact !== undefined) {
      const detail = `the number ${inexact.slice(0, 40)} cannot be held exactly (at most ${MAX_EXACT_SIGNIFICANT_DIGITS} significant digits, or a safe integer); send amounts and large integers as strings`;
      throw new ApiError("invalid_event", detail, { errors: [{ pointer: "/body", detail }] });
    }
    const event = result.data;
    // zod rebuilds objects and drops keys such as "__proto__"; store `data` exactly as parsed.
    const data = (parsed as { data: Record<string, unknown> }).data;
    const headerType = req.headers["x-partner-event"];
    if (headerType !== event.event_type) {
      throw new ApiError(
        "event_type_mismatch",
        headerType === undefined
          ? "the X-Partner-Event header is required and must equal event_type"
          : "X-Partner-Event does not equal the body's event_type",
      );
    }
    const appended = await events.append({
      partnerId: partner.id,
      environment,
      idempotencyKey,
      fingerprint: toHex(sha256(encoder.encode(canonical))),
      eventType: event.event_type,
      occurredAt: event.occurred_at,
      data,
      rawBody: text,
      receivedAt: Date.now(),
    });
    switch (appended.status) {
      case "created":
        return respond(ctx, 200, `{"success":true,"event_id":${appended.event.id},"duplicate":false}`);
      case "duplicate":
        return respond(ctx, 200, `{"success":true,"event_id":${appended.event.id},"duplicate":true}`, {
          "idempotent-replayed": "true",
        });
      case "conflict":
        throw new ApiError(
          "idempotency_key_reused",
          "this Idempotency-Key was already used for a different event; use a new key for a new event",
        );
      case "in_progress":
        throw new ApiError(
          "idempotency_in_progress",
          "an event with this Idempotency-Key is still being stored",
          {
            headers: { "retry-after": "1" },
          },
        );
    }
  }

  async function dispatch(ctx: Context, req: PlainRequest): Promise<PlainResponse> {
    const route = matchRoute(req.path);
    if (route === undefined) throw new ApiError("not_found", "no such endpoint");
    const method = req.method === "HEAD" && route.allow.includes("HEAD") ? "GET" : req.method;
    if (!route.allow.split(", ").includes(method)) {
      throw new ApiError("method_not_allowed", `${req.method} is not allowed here; allowed: ${route.allow}`, {
        headers: { allow: route.allow },
      });
    }
    if (route.name === "openapi") {
      openApiJson ??= JSON.stringify(buildOpenApiDocument());
      return respond(ctx, 200, openApiJson);
    }
    const partner = await authenticate(req);
    await enforceRateLimit(ctx, partner);
    switch (route.name) {
      case "listProducts": {
        const products = await options.products.listProducts(partner.id);
        return respond(ctx, 200, `{"success":true,"data":[${products.map(serialiseProduct).join(",")}]}`);
      }
      case "getProduct": {
        const product = await findProduct(partner, route.slug!);
        return respond(ctx, 200, `{"success":true,"data":${serialiseProduct(product)}}`);
      }
      case "position":
        return position(ctx, req, partner, route.slug!);
      case "yieldCalc":
        return yieldCalc(ctx, req, partner, route.slug!);
      case "inboundEvent":
        return inboundEvent(ctx, req, partner);
    }
  }

  return {
    environment,
    events,
    async handle(req: PlainRequest): Promise<PlainResponse> {
      const ctx: Context = {
        requestId: req.requestId ?? nextRequestId(),
        head: req.method === "HEAD",
        rateHeaders: undefined,
      };
      try {
        return await dispatch(ctx, req);
      } catch (error) {
        if (error instanceof ApiError) return errorResponse(ctx, error);
        if (error instanceof StoreUnavailableError) {
          return errorResponse(
            ctx,
            new ApiError("service_unavailable", "a backing service is unavailable; retry later", {
              headers: { "retry-after": String(error.retryAfterSeconds) },
            }),
          );
        }
        options.onError?.(error, ctx.requestId);
        return errorResponse(ctx, new ApiError("internal_error", "an unexpected error occurred"));
      }
    },
    ready() {
      return Promise.resolve(open);
    },
    async close() {
      open = false;
      const closables = [
        events,
        limiter,
        options.keys,
        options.partners,
        options.products,
        options.positions,
        options.prices,
      ];
      await Promise.all(
        [...new Set(closables)].map((c) =>
          "close" in c && typeof c.close === "function" ? c.close() : undefined,
        ),
      );
    },
  };
}

/** The wire form of a product (CONTRACT §8: every field present; net APY from §2). */
export function toProductResource(record: ProductRecord): Record<string, unknown> {
  const m = record.metrics;
  return {
    slug: record.slug,
    partner: record.partnerName,
    chain: record.chain,
    chain_id: record.chainId,
    wrapper_address: record.wrapperAddress,
    asset_symbol: record.assetSymbol,
    status: record.status,
    underlying_vault_address: record.underlyingVaultAddress,
    asset_address: record.assetAddress,
    asset_decimals: record.assetDecimals,
    service_fee_bps: record.serviceFeeBps,
    partner_fee_bps: record.partnerFeeBps,
    display_name: record.displayName,
    description: record.description,
    latest_metrics:
      m === null
        ? null
        : {
            as_of_date: m.asOfDate,
            wrapper_total_assets: formatUnits(m.wrapperTotalAssets, record.assetDecimals),
            underlying_apy: formatUnits(m.underlyingApyWad, RATE_DECIMALS),
            net_apy_for_user: formatUnits(
              netApy(m.underlyingApyWad, record.serviceFeeBps, record.partnerFeeBps),
              RATE_DECIMALS,
            ),
          },
  };
}

/** IETF RateLimit headers (CONTRACT §7). */
function rateLimitHeaders(environment: Environment, decision: RateDecision): Record<string, string> {
  return {
    "ratelimit-policy": `"${environment}";q=${decision.limit};w=60`,
    ratelimit: `"${environment}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

async function readBody(req: PlainRequest, limit: number): Promise<Uint8Array> {
  const body = req.body;
  if (body === undefined) return new Uint8Array(0);
  if (body instanceof Uint8Array) {
    if (body.byteLength > limit) throw tooLarge(limit);
    return body;
  }
  try {
    return await body(limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw tooLarge(limit);
    if (error instanceof InvalidBodyError) throw new ApiError("invalid_body", error.message);
    throw error;
  }
}

function failedAuthLimited(retryAfterSeconds: number): ApiError {
  return new ApiError("rate_limited", "too many failed authentication attempts from this address", {
    headers: { "retry-after": String(retryAfterSeconds) },
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError("payload_too_large", `the request body exceeds the limit of ${limit} bytes`);
}

/**
 * Query parameters by (decoded) name, values still raw: only the parameters a route reads are
 * decoded, so a malformed unknown parameter is ignored like any unknown one (CONTRACT §3).
 */
function parseQuery(query: string | undefined): Map<string, string[]> {
  const params = new Map<string, string[]>();
  if (query === undefined || query === "") return params;
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = decodeComponent(eq === -1 ? part : part.slice(0, eq));
    if (name === undefined) continue; // an undecodable name is no parameter we read
    const value = eq === -1 ? "" : part.slice(eq + 1);
    const list = params.get(name);
    if (list === undefined) params.set(name, [value]);
    else list.push(value);
  }
  return params;
}

/** Percent-decoding with `+` as space (form encoding); undefined when malformed. */
function decodeComponent(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return undefined;
  }
}

/** CONTRACT §3: a repeated parameter is refused; unknown ones are ignored. */
function singleParam(params: Map<string, string[]>, name: string): string | undefined {
  const values = params.get(name);
  if (values === undefined) return undefined;
  if (values.length > 1)
    throw fieldError("invalid_parameter", name, `${name} is given ${values.length} times; give it once`);
  const value = decodeComponent(values[0]!);
  if (value === undefined)
    throw fieldError("invalid_parameter", name, `${name} has a malformed percent-encoding`);
  return value;
}

function fieldError(
  code: "invalid_parameter" | "invalid_amount" | "invalid_address",
  name: string,
  detail: string,
) {
  return new ApiError(code, detail, { errors: [{ pointer: `/query/${name}`, detail }] });
}

function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

function requestIdGenerator(): () => string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  const prefix = `req_${toHex(bytes)}`;
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36).padStart(6, "0")}`;
}
