/**
 * What every handler and step works with: the options of `createPartnerApi` resolved once (the
 * defaults filled in, the caches built), passed as one object.
 * @module
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import type { Environment } from "../auth/environment.js";
import { KeyHashCache } from "../auth/key-hash-cache.js";
import { type HmacPort, nobleHmacSha256, SignatureVerifier } from "../auth/signature.js";
import { type Accepted, unwrap } from "../result.js";
import { type EventStore, MemoryEventStore } from "../stores/event-store.js";
import { type ApiKeyFormat, partnerYieldKeyFormat } from "../stores/key-format.js";
import type { KeyStore } from "../stores/key-store.js";
import type { Partner, PartnerStore } from "../stores/partner-store.js";
import type { PositionSource } from "../stores/position-source.js";
import type { PriceSource } from "../stores/price-source.js";
import type { ProductRecord, ProductSource } from "../stores/product-source.js";
import { MemoryRateLimiter, type RateLimiter } from "../stores/rate-limiter.js";
import { DEFAULT_BASE_PATH, parseBasePath } from "./base-path.js";
import { addressBucket } from "./client-bucket.js";
import type { ErrorHook, PartnerApiOptions } from "./partner-api-options.js";
import { productJsonCache } from "./product-resource.js";

const DEFAULT_RATE_LIMITS: Readonly<Record<Environment, number>> = { production: 1000, sandbox: 100 };

export interface ApiDependencies {
  readonly environment: Environment;
  readonly basePath: string;
  readonly keys: KeyStore;
  readonly partners: PartnerStore;
  readonly products: ProductSource;
  readonly positions: PositionSource;
  readonly prices: PriceSource;
  readonly events: EventStore;
  readonly rateLimiter: RateLimiter;
  readonly sha256: (data: Uint8Array) => Uint8Array;
  readonly bodyLimitBytes: number;
  readonly failedAuthPerMinute: number;
  /** The failed-authentication limit's bucket of a client address (`addressBucket`). */
  readonly addressBucket: (clientAddress: string) => string;
  readonly onError: ErrorHook | undefined;
  /** How a presented key is checked and hashed (`PartnerApiOptions.keyFormat`). */
  readonly keyFormat: ApiKeyFormat;
  /** Keys that passed the format's and the environment's checks → their stored hash. */
  readonly keyHashes: KeyHashCache<Accepted<string>>;
  /** Requests per rolling minute for the partner in this environment (CONTRACT §7). */
  quotaOf(partner: Partner): number;
  /** A verifier of exactly the partner's active secrets, keyed once per list of secrets. */
  verifierFor(partner: Partner): SignatureVerifier;
  /** A product's wire form, serialised once per record. */
  productJson(product: ProductRecord, partnerName: string): string;
  /** The whole answer of `GET /products/{slug}`, built once per record. */
  productAnswer(product: ProductRecord, partnerName: string): string;
  /** This instance's OpenAPI document (its base path), serialised once. */
  openApiJson(): string;
  /** Milliseconds since the epoch. */
  now(): number;
}

/** Builds the OpenAPI document for a base path (`buildOpenApiDocument`, given by the caller). */
export type OpenApiBuilder = (options: { readonly basePath: string }) => Record<string, unknown>;

/**
 * @throws RangeError when `basePath` is not `""` or `/` + path segments without a trailing `/`.
 */
export function resolveDependencies(
  options: PartnerApiOptions,
  buildOpenApiDocument: OpenApiBuilder,
): ApiDependencies {
  const environment = options.environment;
  const basePath = unwrap(parseBasePath(options.basePath ?? DEFAULT_BASE_PATH));
  const hmac = options.hmac ?? nobleHmacSha256;
  const defaultLimits = options.defaultRateLimits ?? DEFAULT_RATE_LIMITS;
  const verifierFor = verifierCache(hmac);
  let openApiJson: string | undefined;
  const productForms = productJsonCache();
  const rateLimiter = options.rateLimiter ?? new MemoryRateLimiter();
  const sha256 = options.sha256 ?? nobleSha256;
  return {
    environment,
    basePath,
    keys: options.keys,
    partners: options.partners,
    products: options.products,
    positions: options.positions,
    prices: options.prices,
    events: options.events ?? new MemoryEventStore(),
    rateLimiter,
    sha256,
    bodyLimitBytes: options.bodyLimitBytes ?? 65_536,
    failedAuthPerMinute: options.failedAuthPerMinute ?? 30,
    addressBucket: bucketsOf(options.ipv6PrefixLength),
    onError: options.onError,
    keyFormat: options.keyFormat ?? partnerYieldKeyFormat(sha256),
    keyHashes: new KeyHashCache(),
    quotaOf: (partner) =>
      options.rateLimitOverride ?? partner.rateLimits?.[environment] ?? defaultLimits[environment],
    verifierFor,
    productJson: productForms.json,
    productAnswer: productForms.answer,
    openApiJson: () => {
      openApiJson ??= JSON.stringify(buildOpenApiDocument({ basePath }));
      return openApiJson;
    },
    now: Date.now,
  };
}

/**
 * `verifierFor`: a partner's `SignatureVerifier`, keyed on the exact list of secrets the store
 * answered for this request (read on every request, never cached), so a revoked secret stops
 * verifying on the next one (CONTRACT §4). Found by the list's JSON (not a join: no two lists share
 * a key, whatever characters a secret holds), or, cheaper, by the list object itself when a store
 * hands the same one again, its secrets compared one by one with a copy taken when it was first
 * seen (a store that changes a list in place is then still read right).
 */
function verifierCache(hmac: HmacPort): (partner: Partner) => SignatureVerifier {
  const byJson = new Map<string, SignatureVerifier>();
  const byList = new WeakMap<
    readonly string[],
    { readonly secrets: readonly string[]; readonly verifier: SignatureVerifier }
  >();
  return (partner) => {
    const list = partner.signingSecrets;
    const seen = byList.get(list);
    if (seen !== undefined && sameStrings(seen.secrets, list)) return seen.verifier;
    const cacheKey = JSON.stringify(list);
    let verifier = byJson.get(cacheKey);
    if (verifier === undefined) {
      if (byJson.size > 1000) byJson.clear();
      verifier = new SignatureVerifier(list, hmac);
      byJson.set(cacheKey, verifier);
    }
    byList.set(list, { secrets: [...list], verifier });
    return verifier;
  };
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `addressBucket` with the prefix length checked once (a RangeError at construction, not at the
 * first IPv6 request).
 */
function bucketsOf(ipv6PrefixLength: number | undefined): (clientAddress: string) => string {
  const options = { ipv6PrefixLength };
  addressBucket("::", options);
  return (clientAddress) => addressBucket(clientAddress, options);
}
