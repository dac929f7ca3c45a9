/**
 * Rate limiting (CONTRACT §7 and the failed-authentication limit of §4): an exact rolling window.
 * In ANY interval of `windowMs`, at most `limit` hits are allowed; refused hits are not counted.
 * A backend (memory, Redis, …) implements `RateLimiter`; `hit` and `peek` answer with the decision
 * or a promise of it (`MaybePromise`).
 */
import type { MaybePromise } from "./maybe-promise.js";

export interface RateDecision {
  /** Whether this hit was allowed (and counted). */
  readonly allowed: boolean;
  readonly limit: number;
  /** Hits still allowed in the current window after this one. */
  readonly remaining: number;
  /**
   * Whole seconds (rounded up, ≥ 1 when anything is counted) until the oldest counted hit leaves
   * the window, i.e. until `remaining` next grows; 0 when nothing is counted.
   */
  readonly resetSeconds: number;
  /** When refused: whole seconds (rounded up, ≥ 1) until a hit would be allowed again. Else 0. */
  readonly retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one hit for `key` if fewer than `limit` hits fall in the last `windowMs`. */
  hit(key: string, limit: number, windowMs: number): MaybePromise<RateDecision>;
  /** The decision a hit would get now, without counting anything. */
  peek(key: string, limit: number, windowMs: number): MaybePromise<RateDecision>;
  close(): Promise<void>;
}

/**
 * One key's hits as a queue of (millisecond, count) pairs: exact, and its memory is bounded by
 * the distinct milliseconds with hits in the last window (≤ min(hits, windowMs)), whatever the limit.
 */
class HitLog {
  times: number[] = [];
  counts: number[] = [];
  head = 0;
  total = 0;

  expire(before: number): void {
    const { times, counts } = this;
    let head = this.head;
    while (head < times.length && times[head]! <= before) {
      this.total -= counts[head]!;
      head++;
    }
    if (head > 1024 && head * 2 > times.length) {
      this.times = times.slice(head);
      this.counts = counts.slice(head);
      head = 0;
    }
    this.head = head;
  }

  add(at: number): void {
    const last = this.times.length - 1;
    if (last >= this.head && this.times[last] === at) this.counts[last]!++;
    else {
      this.times.push(at);
      this.counts.push(1);
    }
    this.total++;
  }

  get empty(): boolean {
    return this.head >= this.times.length;
  }

  /** Milliseconds from `now` until `n` more of the oldest hits have left the window. */
  msUntilExpired(n: number, now: number, windowMs: number): number {
    let freed = 0;
    for (let i = this.head; i < this.times.length; i++) {
      freed += this.counts[i]!;
      if (freed >= n) return this.times[i]! + windowMs - now;
    }
    return 0;
  }
}

/**
 * Keys of the failed-authentication limit start with this (`auth:` + the client address). They are
 * the one kind of key a client can multiply (every source address is one), so the in-memory limiter
 * caps how many it remembers.
 */
export const FAILED_AUTH_KEY_PREFIX = "auth:";

/** Where failures from addresses the in-memory limiter has no room for are counted, together. */
export const FAILED_AUTH_OVERFLOW_KEY = `${FAILED_AUTH_KEY_PREFIX}\u0000overflow`;

/** Default of `MemoryRateLimiterOptions.maxFailedAuthAddresses`. */
export const DEFAULT_MAX_FAILED_AUTH_ADDRESSES = 50_000;

export interface MemoryRateLimiterOptions {
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
  /**
   * Most failed-authentication keys (`FAILED_AUTH_KEY_PREFIX`…) remembered at once; default 50,000.
   * When that many addresses have failures in the window, an address not among them is limited in
   * ONE shared bucket (`FAILED_AUTH_OVERFLOW_KEY`, same limit): never unlimited, in bounded memory.
   */
  readonly maxFailedAuthAddresses?: number;
}

/**
 * The embedded default. Idle keys are forgotten as their hits expire. Failed-authentication keys
 * are capped (`maxFailedAuthAddresses`); the other keys (partner × environment) are as many as the
 * partners, which the operator controls.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #logs = new Map<string, HitLog>();
  readonly #now: () => number;
  readonly #maxAuthKeys: number;
  #authKeys = 0;
  #lastSweep = 0;
  #lastFullSweep = 0;
  /** The last limit's decision for a key with nothing counted (see `#nothingCounted`). */
  #unused: RateDecision | undefined;

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#maxAuthKeys = options.maxFailedAuthAddresses ?? DEFAULT_MAX_FAILED_AUTH_ADDRESSES;
    if (!Number.isSafeInteger(this.#maxAuthKeys) || this.#maxAuthKeys < 1) {
      throw new RangeError(`maxFailedAuthAddresses must be a positive integer, not ${this.#maxAuthKeys}`);
    }
  }

  /** Answered at once, as is `peek`: the API does not wait for them (`MaybePromise`). */
  hit(key: string, limit: number, windowMs: number): RateDecision {
    return this.#decide(key, limit, windowMs, true);
  }

  peek(key: string, limit: number, windowMs: number): RateDecision {
    return this.#decide(key, limit, windowMs, false);
  }

  close(): Promise<void> {
    this.#logs.clear();
    this.#authKeys = 0;
    return Promise.resolve();
  }

  /** Number of keys currently remembered (for tests and metrics). */
  get size(): number {
    return this.#logs.size;
  }

  #decide(requested: string, limit: number, windowMs: number, count: boolean): RateDecision {
    const now = this.#now();
    this.#sweep(now, windowMs);
    const key = this.#roomFor(requested, now, windowMs);
    let log = this.#logs.get(key);
    log?.expire(now - windowMs);
    const used = log?.total ?? 0;
    if (used >= limit) {
      const waitMs = log === undefined ? 0 : log.msUntilExpired(used - limit + 1, now, windowMs);
      const retry = Math.max(1, Math.ceil(waitMs / 1000));
      return { allowed: false, limit, remaining: 0, resetSeconds: retry, retryAfterSeconds: retry };
    }
    if (count) {
      if (log === undefined) {
        log = new HitLog();
        this.#logs.set(key, log);
        if (isAuthKey(key)) this.#authKeys++;
      }
      log.add(now);
    } else if (log?.empty) {
      this.#forget(key);
      log = undefined;
    }
    const counted = log?.total ?? 0;
    if (log === undefined || counted === 0) return this.#nothingCounted(limit);
    const resetMs = log.msUntilExpired(1, now, windowMs);
    return {
      allowed: true,
      limit,
      remaining: Math.max(0, limit - counted),
      resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
      retryAfterSeconds: 0,
    };
  }

  /**
   * The decision on a key with nothing counted (the failed-authentication peek of nearly every
   * request): one frozen object for every such key of this limit.
   */
  #nothingCounted(limit: number): RateDecision {
    if (this.#unused?.limit !== limit) {
      this.#unused = Object.freeze({
        allowed: true,
        limit,
        remaining: limit,
        resetSeconds: 0,
        retryAfterSeconds: 0,
      });
    }
    return this.#unused;
  }

  /**
   * The key to count under: the requested one, unless it is a failed-authentication key the table
   * has no room for (then the shared overflow bucket). Before overflowing, keys whose hits have all
   * expired are forgotten (at most once a second, so a flood does not sweep on every request).
   */
  #roomFor(key: string, now: number, windowMs: number): string {
    if (this.#authKeys < this.#maxAuthKeys || !isAuthKey(key) || this.#logs.has(key)) return key;
    if (now - this.#lastFullSweep >= 1000) {
      this.#lastFullSweep = now;
      this.#expireAll(now, windowMs);
      if (this.#authKeys < this.#maxAuthKeys) return key;
    }
    return FAILED_AUTH_OVERFLOW_KEY;
  }

  /** Forgets keys with no hit in the window, at most once per window. */
  #sweep(now: number, windowMs: number): void {
    if (now - this.#lastSweep < windowMs) return;
    this.#lastSweep = now;
    this.#expireAll(now, windowMs);
  }

  #expireAll(now: number, windowMs: number): void {
    for (const [key, log] of this.#logs) {
      log.expire(now - windowMs);
      if (log.empty) this.#forget(key);
    }
  }

  #forget(key: string): void {
    if (this.#logs.delete(key) && isAuthKey(key)) this.#authKeys--;
  }
}

function isAuthKey(key: string): boolean {
  return key.startsWith(FAILED_AUTH_KEY_PREFIX);
}
