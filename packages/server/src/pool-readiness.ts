/**
 * Whether this instance's own PostgreSQL pool is exhausted, for `/readyz` (CONTRACT "Durable,
 * shared stores"): every connection of the pool checked out and requests queued for one, without
 * a break, for `exhaustedAfterMs` (default 5 s), WHILE the database answers (a connection was
 * given back without an error in the last `progressWindowMs`, default 1 s). A database that does
 * not answer fills every instance's pool alike; that is a shared store down, reported in `stores`
 * but no reason to take this instance out of the load balancer. Sampled every 100 ms by an unref'd
 * timer; the pool's counters are read, nothing is sent to the database.
 * @module
 */

/** What of a `pg.Pool` the watch reads. */
export interface WatchedPool {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options: { readonly max?: number | undefined };
  on(event: "release", listener: (error: Error | undefined) => void): unknown;
}

export interface PoolWatchOptions {
  /** Saturated this long without a break: exhausted. Default 5000 ms. */
  readonly exhaustedAfterMs?: number | undefined;
  /** The database counts as answering when a connection came back clean this recently. Default 1000 ms. */
  readonly progressWindowMs?: number | undefined;
  /** Sampling period. Default 100 ms. */
  readonly sampleMs?: number | undefined;
  /** Milliseconds, monotonic; default `performance.now`. */
  readonly now?: (() => number) | undefined;
}

export interface PoolWatch {
  /** `"ok"` or `"exhausted"` (see the module comment). */
  state(): "ok" | "exhausted";
  /** Samples the pool now (the timer does it every `sampleMs`). */
  sample(): void;
  stop(): void;
}

/**
 * @example
 * const watch = watchPool(stores.pool);
 * startServer({ instanceChecks: { database_pool: watch.state } });
 */
export function watchPool(pool: WatchedPool, options: PoolWatchOptions = {}): PoolWatch {
  const exhaustedAfter = options.exhaustedAfterMs ?? 5000;
  const progressWindow = options.progressWindowMs ?? 1000;
  const now = options.now ?? (() => performance.now());
  const max = pool.options.max ?? 10;
  let saturatedSince: number | undefined;
  let lastCleanRelease = Number.NEGATIVE_INFINITY;
  pool.on("release", (error) => {
    if (error === undefined || error === null) lastCleanRelease = now();
  });
  const sample = () => {
    const saturated = pool.totalCount >= max && pool.idleCount === 0 && pool.waitingCount > 0;
    if (!saturated) saturatedSince = undefined;
    else saturatedSince ??= now();
  };
  const timer = setInterval(sample, options.sampleMs ?? 100);
  timer.unref();
  return {
    state() {
      sample();
      const t = now();
      const exhausted =
        saturatedSince !== undefined &&
        t - saturatedSince >= exhaustedAfter &&
        t - lastCleanRelease <= progressWindow;
      return exhausted ? "exhausted" : "ok";
    },
    sample,
    stop: () => clearInterval(timer),
  };
}
