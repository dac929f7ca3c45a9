/**
 * Rate limits that never stop the API when the shared limiter's store (Redis) is down (CONTRACT
 * §7, "When Redis is down"): a decision the shared limiter cannot make (`StoreUnavailableError`)
 * is made by a limiter in this process, with the same quotas, so each instance counts its own
 * while Redis is away. The switch is logged once; Redis is then pinged every `probeMs` (no request
 * waits on it meanwhile), and the first answer switches back, logged too.
 * @module
 */
import {
  MemoryRateLimiter,
  type RateDecision,
  type RateLimiter,
  StoreUnavailableError,
} from "@partner-yield/core";

export interface FallbackRateLimiterOptions {
  /** The shared limiter, with a check that resolves when its store answers. */
  readonly primary: RateLimiter & { ping(): Promise<void> };
  /** Default: a new `MemoryRateLimiter`. */
  readonly fallback?: RateLimiter | undefined;
  /** Told when the decisions move to this process (`true`, with the reason) and back (`false`). */
  readonly onSwitch?: ((local: boolean, reason: string) => void) | undefined;
  /** How often the shared store is pinged while it is down. Default 1000 ms. */
  readonly probeMs?: number | undefined;
}

/**
 * @example
 * const limiter = new FallbackRateLimiter({ primary: new RedisRateLimiter({ redis }) });
 */
export class FallbackRateLimiter implements RateLimiter {
  readonly #primary: RateLimiter & { ping(): Promise<void> };
  readonly #fallback: RateLimiter;
  readonly #onSwitch: ((local: boolean, reason: string) => void) | undefined;
  readonly #probeMs: number;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: FallbackRateLimiterOptions) {
    this.#primary = options.primary;
    this.#fallback = options.fallback ?? new MemoryRateLimiter();
    this.#onSwitch = options.onSwitch;
    this.#probeMs = options.probeMs ?? 1000;
  }

  /** True while the decisions are made in this process (the shared store is down). */
  get local(): boolean {
    return this.#probe !== undefined;
  }

  hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    if (this.local) return Promise.resolve(this.#fallback.hit(key, limit, windowMs));
    return Promise.resolve(this.#primary.hit(key, limit, windowMs)).catch((error: unknown) => {
      this.#degrade(error);
      return this.#fallback.hit(key, limit, windowMs);
    });
  }

  peek(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    if (this.local) return Promise.resolve(this.#fallback.peek(key, limit, windowMs));
    return Promise.resolve(this.#primary.peek(key, limit, windowMs)).catch((error: unknown) => {
      this.#degrade(error);
      return this.#fallback.peek(key, limit, windowMs);
    });
  }

  /** The shared store's check (for `/readyz`, which reports it). */
  ping(): Promise<void> {
    return this.#primary.ping();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#probe);
    this.#probe = undefined;
    await Promise.all([this.#primary.close(), this.#fallback.close()]);
  }

  /** Rethrows what is not the store being down; otherwise moves the decisions here, once. */
  #degrade(error: unknown): void {
    if (!(error instanceof StoreUnavailableError)) throw error;
    if (this.local || this.#closed) return;
    let probing = false;
    this.#probe = setInterval(() => {
      if (probing) return;
      probing = true;
      this.#primary.ping().then(
        () => {
          probing = false;
          if (this.#probe === undefined) return;
          clearInterval(this.#probe);
          this.#probe = undefined;
          this.#onSwitch?.(false, "the shared store answers again");
        },
        () => {
          probing = false;
        },
      );
    }, this.#probeMs);
    this.#probe.unref();
    this.#onSwitch?.(true, error.message);
  }
}
