/**
 * Options of `createPartnerApi`. Every store is a port: pass your own backend or take the
 * in-memory default.
 */
import type { Environment } from "../auth/environment.js";
import type { HmacPort } from "../auth/signature.js";
import type { EventStore } from "../stores/event-store.js";
import type { ApiKeyFormat } from "../stores/key-format.js";
import type { KeyStore } from "../stores/key-store.js";
import type { PartnerStore } from "../stores/partner-store.js";
import type { PositionSource } from "../stores/position-source.js";
import type { PriceSource } from "../stores/price-source.js";
import type { ProductSource } from "../stores/product-source.js";
import type { RateLimiter } from "../stores/rate-limiter.js";

/**
 * The 5xx answer an error became: `500 internal_error` for an error nobody expected (a bug),
 * `503 service_unavailable` for a `StoreUnavailableError` (a store down, a missing USD price),
 * `503 event_store_full` when the in-memory event store is at its bound.
 * @example const answer: ErrorAnswer = { status: 503, code: "service_unavailable" };
 */
export type ErrorAnswer =
  | { readonly status: 500; readonly code: "internal_error" }
  | { readonly status: 503; readonly code: "service_unavailable" | "event_store_full" };

/**
 * Receives every error the API answered with a 5xx, with its cause: the client sees only the
 * problem body (no details), the operator sees this.
 * @example onError: (error, requestId, { status }) => console.error(JSON.stringify({ requestId, status, message: String(error) }))
 */
export type ErrorHook = (error: unknown, requestId: string, answer: ErrorAnswer) => void;

export interface PartnerApiOptions {
  /** The one environment this instance serves (CONTRACT §9). */
  readonly environment: Environment;
  readonly keys: KeyStore;
  readonly partners: PartnerStore;
  readonly products: ProductSource;
  readonly positions: PositionSource;
  readonly prices: PriceSource;
  /**
   * Where the API lives: every route's path starts with it. Default `/api/partner`; `""` serves
   * the routes at the root (`/products`). Either `""` or `/` + segments, without a trailing `/`.
   */
  readonly basePath?: string | undefined;
  /** Default: a new `MemoryEventStore`. */
  readonly events?: EventStore | undefined;
  /** Default: a new `MemoryRateLimiter`. */
  readonly rateLimiter?: RateLimiter | undefined;
  /** HMAC-SHA256 implementation; default @noble/hashes. The node adapter injects node:crypto. */
  readonly hmac?: HmacPort | undefined;
  /**
   * SHA-256 implementation (event fingerprints, and API key hashes unless `keyFormat` is given);
   * default @noble/hashes. It must
   * not keep `data` after it returns: the fingerprint's input is a view of a buffer the next
   * event reuses.
   */
  readonly sha256?: ((data: Uint8Array) => Uint8Array) | undefined;
  /**
   * How a presented `X-Api-Key` is recognised, checked and hashed for the key store; default ours
   * (`partnerYieldKeyFormat`: `ypk_test_…` / `ypk_live_…`, stored as SHA-256 with `sha256`). A team
   * whose registry holds keys of its own format (another prefix, a peppered hash, a bcrypt
   * verifier) passes its own and keeps its keys.
   */
  readonly keyFormat?: ApiKeyFormat | undefined;
  /** Maximum event body in bytes; default 65536 (CONTRACT §5). */
  readonly bodyLimitBytes?: number | undefined;
  /** Failed authentications allowed per client address per minute; default 30 (CONTRACT §4). */
  readonly failedAuthPerMinute?: number | undefined;
  /**
   * Leading bits of an IPv6 client address that count as one address in the failed-authentication
   * limit (`addressBucket`), 1 to 128; default 64: one customer is often given a whole /64.
   */
  readonly ipv6PrefixLength?: number | undefined;
  /** Requests per rolling minute when a partner sets none; default production 1000, sandbox 100. */
  readonly defaultRateLimits?: Readonly<Record<Environment, number>> | undefined;
  /** Overrides every partner's per-minute quota (QA and load runs); the limiter still runs. */
  readonly rateLimitOverride?: number | undefined;
  /**
   * Called with every error answered as a 5xx, and why: `500 internal_error` (unexpected, answered
   * without details) and `503 service_unavailable` (a `StoreUnavailableError`: a store down, a
   * missing USD price). Log it: nothing else tells the operator the cause.
   */
  readonly onError?: ErrorHook | undefined;
  /** Request id generator; default `req_` + a random per-instance prefix + a counter. */
  readonly generateRequestId?: (() => string) | undefined;
}
