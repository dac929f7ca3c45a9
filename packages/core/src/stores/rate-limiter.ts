/**
 * Rate limiting (CONTRACT §7 and the failed-authentication limit of §4): an exact rolling window.
 * In ANY interval of `windowMs`, at most `limit` hits are allowed; refused hits are not counted.
 * A backend (memory, Redis, …) implements `RateLimiter`.
 */

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
  hit(key: string, limit: number, windowMs: number): Promise<RateDecision>;
  /** The decision a hit would get now, without counting anything. */
  peek(key: string, limit: number, windowMs: number): Promise<RateDecision>;
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

export interface MemoryRateLimiterOptions {
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
}

/** The embedded default. Idle keys are forgotten as their hits expire. */
export class MemoryRateLimiter implements RateLimiter {
  readonly #logs = new Map<string, HitLog>();
  readonly #now: () => number;
  #lastSweep = 0;

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    return Promise.resolve(this.#decide(key, limit, windowMs, true));
  }

  peek(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    return Promise.resolve(this.#decide(key, limit, windowMs, false));
  }

  close(): Promise<void> {
    this.#logs.clear();
    return Promise.resolve();
  }

  /** Number of keys currently remembered (for tests and metrics). */
  get size(): number {
    return this.#logs.size;
  }

  #decide(key: string, limit: number, windowMs: number, count: boolean): RateDecision {
    const now = this.#now();
    this.#sweep(now, windowMs);
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
      }
      log.add(now);
    } else if (log?.empty) {
      this.#logs.delete(key);
      log = undefined;
    }
    const counted = log?.total ?? 0;
    const resetMs = log === undefined || log.empty ? 0 : log.msUntilExpired(1, now, windowMs);
    return {
      allowed: true,
      limit,
      remaining: Math.max(0, limit - counted),
      resetSeconds: counted === 0 ? 0 : Math.max(1, Math.ceil(resetMs / 1000)),
      retryAfterSeconds: 0,
    };
  }

  /** Forgets keys with no hit in the window, at most once per window. */
  #sweep(now: number, windowMs: number): void {
    if (now - this.#lastSweep < windowMs) return;
    this.#lastSweep = now;
    for (const [key, log] of this.#logs) {
      log.expire(now - windowMs);
      if (log.empty) this.#logs.delete(key);
    }
  }
}
