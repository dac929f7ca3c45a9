/**
 * The client-side throttle: a token bucket, so a conformance run never becomes the abuse the
 * target's rate limit exists to stop (interface.md §8, CONTRACT §7).
 * @module
 */

/** A clock in milliseconds and a way to wait on it; injectable so tests run in virtual time. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** Real time: `performance.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface TokenBucketOptions {
  /** Tokens added per minute: the sustained request rate. */
  readonly perMinute: number;
  /**
   * Most tokens the bucket holds: the largest burst. In any 60 s the bucket lets through at most
   * `burst + perMinute` requests, so keep that sum at or under the target's quota.
   */
  readonly burst: number;
  readonly clock?: Clock;
}

/**
 * A token bucket that starts full. `take()` waits until a token is available and spends it;
 * `pauseFor()` empties it for a while (a 429's `Retry-After`).
 * @example
 * const bucket = new TokenBucket({ perMinute: 90, burst: 9 });
 * await bucket.take(); // immediate for the first 9, then one every 667 ms
 */
export class TokenBucket {
  readonly perMinute: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #updatedAt: number;
  #pausedUntil = 0;
  /** Serialises waiters, so tokens are handed out in call order. */
  #queue: Promise<void> = Promise.resolve();
  #waitedMs = 0;

  constructor(options: TokenBucketOptions) {
    if (!(options.perMinute > 0) || !Number.isFinite(options.perMinute)) {
      throw new RangeError(`requests per minute must be a positive number, got ${String(options.perMinute)}`);
    }
    if (!Number.isInteger(options.burst) || options.burst < 1) {
      throw new RangeError(`burst must be an integer of at least 1, got ${String(options.burst)}`);
    }
    this.perMinute = options.perMinute;
    this.burst = options.burst;
    this.#clock = options.clock ?? systemClock;
    this.#tokens = options.burst;
    this.#updatedAt = this.#clock.now();
  }

  /** Total milliseconds callers spent waiting for tokens. */
  get waitedMs(): number {
    return this.#waitedMs;
  }

  /** Waits for one token and spends it. Resolves with the milliseconds waited. */
  take(): Promise<number> {
    const turn = this.#queue.then(() => this.#takeNow());
    this.#queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  /** No token is handed out for `ms` from now, and the bucket restarts empty after it (Retry-After). */
  pauseFor(ms: number): void {
    const until = this.#clock.now() + Math.max(0, ms);
    if (until > this.#pausedUntil) this.#pausedUntil = until;
    this.#tokens = 0;
    this.#updatedAt = Math.max(this.#updatedAt, until);
  }

  async #takeNow(): Promise<number> {
    let waited = 0;
    for (;;) {
      const now = this.#clock.now();
      if (now < this.#pausedUntil) {
        const ms = this.#pausedUntil - now;
        waited += ms;
        await this.#clock.sleep(ms);
        continue;
      }
      this.#refill(now);
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        this.#waitedMs += waited;
        return waited;
      }
      const ms = Math.ceil(((1 - this.#tokens) * 60_000) / this.perMinute);
      waited += ms;
      await this.#clock.sleep(ms);
    }
  }

  #refill(now: number): void {
    if (now <= this.#updatedAt) return;
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#updatedAt) * this.perMinute) / 60_000);
    this.#updatedAt = now;
  }
}

/**
 * The default burst for a rate: a tenth of it, at least 1. With the default 90 a minute that is
 * 9, so any 60 s window sees at most 99 requests: under the sandbox's 100.
 * @example defaultBurst(90); // 9
 */
export function defaultBurst(perMinute: number): number {
  return Math.max(1, Math.floor(perMinute / 10));
}
