/**
 * The store calls every partner request makes, answered at once where the store is one of the
 * embedded in-memory ones. Each `await` of a store's promise costs a suspended frame, two closures,
 * a promise reaction and a microtask turn; a GET of a product makes five such calls before its
 * handler runs (docs/performance.md). An in-memory store has its answer at hand, so the API calls
 * its synchronous form instead. Any other store (PostgreSQL, Redis, your own) is awaited as before.
 *
 * Only an instance of exactly the in-memory class qualifies: a subclass may override the async
 * method (to count calls, or to inject a fault in a test), and that override must run.
 * @module
 */
import type { ApiKeyRecord, KeyStore } from "../stores/key-store.js";
import { MemoryKeyStore } from "../stores/key-store.js";
import type { Partner, PartnerStore } from "../stores/partner-store.js";
import { MemoryPartnerStore } from "../stores/partner-store.js";
import type { ProductRecord, ProductSource } from "../stores/product-source.js";
import { MemoryProductSource } from "../stores/product-source.js";
import type { RateDecision, RateLimiter } from "../stores/rate-limiter.js";
import { MemoryRateLimiter } from "../stores/rate-limiter.js";

/** Synchronous forms of the stores' calls; each is undefined when its store must be awaited. */
export interface AnswerNow {
  readonly peek: ((key: string, limit: number, windowMs: number) => RateDecision) | undefined;
  readonly hit: ((key: string, limit: number, windowMs: number) => RateDecision) | undefined;
  readonly findByHash: ((keyHash: string) => ApiKeyRecord | undefined) | undefined;
  readonly getPartner: ((partnerId: string) => Partner | undefined) | undefined;
  readonly getProduct: ((partnerId: string, slug: string) => ProductRecord | undefined) | undefined;
}

/**
 * @example answerNow({ rateLimiter: new MemoryRateLimiter(), … }).hit; // a function
 * @example answerNow({ rateLimiter: redisLimiter, … }).hit; // undefined: await rateLimiter.hit()
 */
export function answerNow(stores: {
  readonly rateLimiter: RateLimiter;
  readonly keys: KeyStore;
  readonly partners: PartnerStore;
  readonly products: ProductSource;
}): AnswerNow {
  const { rateLimiter, keys, partners, products } = stores;
  const limiter = exactly(rateLimiter, MemoryRateLimiter);
  const keyStore = exactly(keys, MemoryKeyStore);
  const partnerStore = exactly(partners, MemoryPartnerStore);
  const productSource = exactly(products, MemoryProductSource);
  return {
    peek: limiter && ((key, limit, windowMs) => limiter.peekNow(key, limit, windowMs)),
    hit: limiter && ((key, limit, windowMs) => limiter.hitNow(key, limit, windowMs)),
    findByHash: keyStore && ((keyHash) => keyStore.findByHashNow(keyHash)),
    getPartner: partnerStore && ((partnerId) => partnerStore.getPartnerNow(partnerId)),
    getProduct: productSource && ((partnerId, slug) => productSource.getProductNow(partnerId, slug)),
  };
}

/** `value` when its class is exactly `type` (not a subclass, not another implementation). */
function exactly<T extends object>(value: object, type: abstract new (...args: never[]) => T): T | undefined {
  return Object.getPrototypeOf(value) === type.prototype ? (value as T) : undefined;
}
