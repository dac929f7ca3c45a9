/**
 * Options of `createPartnerApi`. Every store is a port: pass your own backend or take the
 * in-memory default.
 */
import type { Environment } from "../auth/api-key.js";
import type { HmacPort } from "../auth/signature.js";
import type { EventStore } from "../stores/event-store.js";
import type { KeyStore } from "../stores/key-store.js";
import type { PartnerStore } from "../stores/partner-store.js";
import type { PositionSource, PriceSource, ProductSource } from "../stores/product-source.js";
import type { RateLimiter } from "../stores/rate-limiter.js";

export interface PartnerApiOptions {
  /** The one environment this instance serves (CONTRACT §9). */
  readonly environment: Environment;
  readonly keys: KeyStore;
  readonly partners: PartnerStore;
  readonly products: ProductSource;
  readonly positions: PositionSource;
  readonly prices: PriceSource;
  /** Default: a new `MemoryEventStore`. */
  readonly events?: EventStore | undefined;
  /** Default: a new `MemoryRateLimiter`. */
  readonly rateLimiter?: RateLimiter | undefined;
  /** HMAC-SHA256 implementation; default @noble/hashes. The node adapter injects node:crypto. */
  readonly hmac?: HmacPort | undefined;
  /** SHA-256 implementation (API key hashes, event fingerprints); default @noble/hashes. */
  readonly sha256?: ((data: Uint8Array) => Uint8Array) | undefined;
  /** Maximum event body in bytes; default 65536 (CONTRACT §5). */
  readonly bodyLimitBytes?: number | undefined;
  /** Failed authentications allowed per client address per minute; default 30 (CONTRACT §4). */
  readonly failedAuthPerMinute?: number | undefined;
  /** Requests per rolling minute when a partner sets none; default production 1000, sandbox 100. */
  readonly defaultRateLimits?: Readonly<Record<Environment, number>> | undefined;
  /** Overrides every partner's per-minute quota (QA and load runs); the limiter still runs. */
  readonly rateLimitOverride?: number | undefined;
  /** Called with unexpected errors (answered as 500 internal_error without details). */
  readonly onError?: ((error: unknown, requestId: string) => void) | undefined;
  /** Request id generator; default `req_` + a random per-instance prefix + a counter. */
  readonly generateRequestId?: (() => string) | undefined;
}
