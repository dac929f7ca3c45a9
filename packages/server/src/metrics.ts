/**
 * Prometheus metrics of `partner-yield serve` (prom-client, on a registry of this server's own):
 * requests by route, status and error code, latency by route, 429s and failed authentications by
 * partner, events accepted / duplicate / refused, store calls (latency, errors, up), the PostgreSQL
 * pool, the read cache, the age of each product's price, and the process (prom-client's default
 * metrics). Served by `metrics-server.ts` on a port of its own, never on the partner port.
 *
 * Every label value comes from a bounded set: route templates (`GET /products/{slug}`, never a raw
 * path), statuses, error codes, partner ids (of keys the store found, never what a client sent),
 * store and method names, product slugs. A request costs two Map lookups and a few additions
 * (metrics-cells.ts), a store call two clock reads and a histogram update.
 * @module
 */
import { StoreUnavailableError } from "@partner-yield/core";
import { type AnsweredRequest, settlesWithin } from "@partner-yield/node-adapter";
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { CellCounter, CellHistogram } from "./metrics-cells.js";

/** Every series name starts with this. */
export const METRICS_PREFIX = "partner_yield_";

/** The route of the event intake (`ResponseOutcome.route`). */
const EVENTS_ROUTE = "POST /webhooks/inbound";

/** Latency buckets, in seconds: 1 ms to 10 s (the request timeout is 30 s, a statement's 5 s). */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Store calls: from a cache hit (microseconds) to a statement's timeout. */
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Longest a store check may take during a scrape (as `/readyz`'s). */
const STORE_CHECK_MS = 2000;

/** The pool fields read at each scrape (a `pg.Pool`). */
export interface PoolLike {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options: { readonly max?: number | undefined };
}

/** What the metrics read of the read cache (store-postgres `PostgresReadCache`). */
export interface ReadCacheLike {
  state(): {
    readonly trusted: boolean;
    readonly listening: boolean;
    readonly changes: number;
    readonly entries: Readonly<Record<string, number>>;
    /** When the last answered heartbeat (or the subscription) was sent; see `confirmedAtMs`. */
    readonly confirmedAtMs?: number | undefined;
  };
  /** Lookups per table: answered from the cache, or sent to the database. */
  lookups(): Readonly<Record<string, { readonly hits: number; readonly misses: number }>>;
}

/** One product's price age, in seconds (the database's clock: now() − updated_at). */
export interface PriceAgeSample {
  readonly partner: string;
  readonly product: string;
  readonly ageSeconds: number;
}

/** The event consumers' state (store-postgres `PostgresEventConsumers.consumers()`) and the prune total. */
export interface EventLogSample {
  readonly consumers: readonly {
    readonly name: string;
    readonly lagEvents: number;
    readonly lagSeconds: number;
  }[];
  /** Events deleted by `partner-yield events prune`, over the database's life (its admin audit). */
  readonly pruned: number;
}

export interface ServerMetrics {
  readonly registry: Registry;
  /** The listener's hook: called once per answered request. */
  readonly requestDone: (request: AnsweredRequest) => void;
  /**
   * `port` with every method timed (`partner_yield_store_call_duration_seconds{store,operation}`)
   * and its failures counted; the methods are called on `port` itself (its private fields work).
   */
  instrument<T extends object>(store: string, port: T): T;
  /** Store checks (as `/readyz`'s), run at each scrape: `partner_yield_store_up{store}`. */
  setStoreChecks(checks: Readonly<Record<string, () => Promise<void>>>): void;
  setPool(pool: PoolLike): void;
  setReadCache(cache: ReadCacheLike): void;
  /** Read at each scrape; a failure leaves the ages out of that scrape. */
  setPriceAges(read: () => Promise<readonly PriceAgeSample[]>): void;
  /** Read at each scrape: consumer lag and events pruned; a failure leaves them out of that scrape. */
  setEventLog(read: () => Promise<EventLogSample>): void;
}

/**
 * @example
 * const metrics = createServerMetrics();
 * const server = await startServer({ api, requestDone: metrics.requestDone });
 * const scrape = await startMetricsServer({ registry: metrics.registry, port: 9464 });
 */
export function createServerMetrics(options: { readonly processMetrics?: boolean } = {}): ServerMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  // The series a request or a store call updates: plain numbers (metrics-cells.ts).
  const requests = new CellCounter(
    `${METRICS_PREFIX}http_requests_total`,
    "Requests answered, by route template (unmatched: no route took it), status and error code (none for a success).",
    ["route", "status", "code"],
    registry,
  );
  const latency = new CellHistogram(
    `${METRICS_PREFIX}http_request_duration_seconds`,
    "From a request's arrival to the end of its response, by route template.",
    ["route"],
    REQUEST_BUCKETS,
    registry,
  );
  const rateLimited = new CellCounter(
    `${METRICS_PREFIX}http_rate_limited_total`,
    "429 answers, by partner (unknown: the client's address was limited before a key was found).",
    ["partner", "code"],
    registry,
  );
  const authFailures = new CellCounter(
    `${METRICS_PREFIX}http_auth_failures_total`,
    "401 answers (key missing, unknown, revoked; signature refused), by partner (unknown: no key found) and error code.",
    ["partner", "code"],
    registry,
  );
  const events = new CellCounter(
    `${METRICS_PREFIX}events_total`,
    "Events posted to the intake: accepted (stored), duplicate (a replay answered with its original), refused (4xx), failed (5xx).",
    ["outcome"],
    registry,
  );
  const eventCells = {
    accepted: events.cell("accepted"),
    duplicate: events.cell("duplicate"),
    refused: events.cell("refused"),
    failed: events.cell("failed"),
  };

  const storeCalls = new CellHistogram(
    `${METRICS_PREFIX}store_call_duration_seconds`,
    "Calls of the API's stores (PostgreSQL, Redis or in memory, as configured), by store and method.",
    ["store", "operation"],
    STORE_BUCKETS,
    registry,
  );
  const storeErrors = new CellCounter(
    `${METRICS_PREFIX}store_errors_total`,
    "Store calls that failed, by store, method and kind (unavailable: the store could not answer, 503).",
    ["store", "operation", "kind"],
    registry,
  );

  let storeChecks: Readonly<Record<string, () => Promise<void>>> = {};
  new Gauge({
    name: `${METRICS_PREFIX}store_up`,
    help: "1 when the store answered its check (as /readyz's) during this scrape, else 0.",
    labelNames: ["store"] as const,
    registers,
    async collect() {
      // The pool's gauges are read first (their collect runs in this same turn), so they show the
      // pool as the requests left it, not with this scrape's own checks in it.
      await Promise.resolve();
      this.reset();
      // Several stores often share one check (one pool): each distinct check runs once.
      const runs = new Map<() => Promise<void>, Promise<number>>();
      const names = Object.keys(storeChecks);
      const results = await Promise.all(
        names.map((name) => {
          const check = storeChecks[name]!;
          let run = runs.get(check);
          if (run === undefined) {
            run = runCheck(check);
            runs.set(check, run);
          }
          return run;
        }),
      );
      for (const [i, name] of names.entries()) this.labels(name).set(results[i]!);
    },
  });

  /** The pool's gauges, registered with the pool (a server without PostgreSQL has none). */
  const setPool = (pool: PoolLike): void => {
    new Gauge({
      name: `${METRICS_PREFIX}pg_pool_connections`,
      help: "PostgreSQL pool connections: in_use (lent to a statement), idle, max (the pool's bound).",
      labelNames: ["state"] as const,
      registers,
      collect() {
        this.labels("in_use").set(pool.totalCount - pool.idleCount);
        this.labels("idle").set(pool.idleCount);
        this.labels("max").set(pool.options.max ?? 10);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}pg_pool_waiting`,
      help: "Requests waiting for a PostgreSQL pool connection (every connection is in use).",
      registers,
      collect() {
        this.set(pool.waitingCount);
      },
    });
  };

  /** The read cache's series, registered with the cache (none with `--read-cache off`). */
  const setReadCache = (cache: ReadCacheLike): void => {
    new Counter({
      name: `${METRICS_PREFIX}read_cache_lookups_total`,
      help: "Read cache lookups by table and result: hit (answered from this process), miss (read from PostgreSQL, also while the cache is not trusted).",
      labelNames: ["table", "result"] as const,
      registers,
      collect() {
        this.reset();
        for (const [table, counts] of Object.entries(cache.lookups())) {
          this.labels(table, "hit").inc(counts.hits);
          this.labels(table, "miss").inc(counts.misses);
        }
      },
    });
    new Counter({
      name: `${METRICS_PREFIX}read_cache_invalidations_total`,
      help: "Change notifications (LISTEN/NOTIFY) the read cache applied.",
      registers,
      collect() {
        this.reset();
        this.inc(cache.state().changes);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}read_cache_trusted`,
      help: "1 while the read cache answers (subscribed, heartbeat recent); 0 while every read goes to PostgreSQL.",
      registers,
      collect() {
        this.set(cache.state().trusted ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}read_cache_entries`,
      help: "Entries the read cache holds, by table (rows found and rows known absent).",
      labelNames: ["table"] as const,
      registers,
      collect() {
        for (const [table, n] of Object.entries(cache.state().entries)) this.labels(table).set(n);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}read_cache_invalidation_lag_seconds`,
      help: "Bound of the read cache's invalidation lag: seconds since the last heartbeat (or subscription) that was answered, every change committed before it was sent having been applied; about the heartbeat interval (1 s) while healthy, absent while not listening.",
      registers,
      collect() {
        this.reset();
        const at = cache.state().confirmedAtMs;
        if (at !== undefined) this.set(Math.max(0, (Date.now() - at) / 1000));
      },
    });
  };

  /** The price ages, read at each scrape; a failure leaves them out of that scrape. */
  const setPriceAges = (read: () => Promise<readonly PriceAgeSample[]>): void => {
    new Gauge({
      name: `${METRICS_PREFIX}price_age_seconds`,
      help: "Age of the USD price each product is valued at (now minus its observation time), by partner and product.",
      labelNames: ["partner", "product"] as const,
      registers,
      async collect() {
        await Promise.resolve(); // after the pool's gauges, as store_up
        this.reset();
        let samples: readonly PriceAgeSample[];
        try {
          samples = await read();
        } catch {
          // The store is down: store_up says so; no age is better than an old one.
          return;
        }
        for (const s of samples) this.labels(s.partner, s.product).set(s.ageSeconds);
      },
    });
  };

  /** Consumer lag and the prune total, read at each scrape (one read shared by the three series). */
  const setEventLog = (read: () => Promise<EventLogSample>): void => {
    let reading: Promise<EventLogSample | undefined> | undefined;
    /** One read per scrape: the first series' collect starts it, the others share it. */
    const sample = () => {
      reading ??= read()
        .catch(() => undefined)
        .finally(() => {
          setTimeout(() => {
            reading = undefined;
          }, 0).unref?.();
        });
      return reading;
    };
    const lagEvents = new Gauge({
      name: `${METRICS_PREFIX}event_consumer_lag_events`,
      help: "Events committed after a consumer's checkpoint, by consumer name (partner-yield events consumers list).",
      labelNames: ["consumer"] as const,
      registers,
      async collect() {
        const s = await sample();
        lagEvents.reset();
        for (const c of s?.consumers ?? []) lagEvents.labels(c.name).set(c.lagEvents);
      },
    });
    const lagSeconds = new Gauge({
      name: `${METRICS_PREFIX}event_consumer_lag_seconds`,
      help: "Age of the oldest event a consumer has not acknowledged (0 when it is caught up), by consumer name.",
      labelNames: ["consumer"] as const,
      registers,
      async collect() {
        const s = await sample();
        lagSeconds.reset();
        for (const c of s?.consumers ?? []) lagSeconds.labels(c.name).set(c.lagSeconds);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}events_pruned`,
      help: "Events deleted by `partner-yield events prune` over the database's life (from its admin audit; a gauge, since the deletions are made by the CLI, not by this process).",
      registers,
      async collect() {
        const s = await sample();
        this.reset();
        if (s !== undefined) this.set(s.pruned);
      },
    });
  };

  const requestDone = (request: AnsweredRequest): void => {
    const outcome = request.outcome;
    const status = request.status;
    const route = outcome?.route ?? opsRoute(request.path);
    const code = outcome?.errorCode ?? (status >= 400 ? "other" : "none");
    requests.cell(route, String(status), code).value++;
    latency.cell(route).observe(request.durationMs / 1000);
    if (status === 429) rateLimited.cell(outcome?.partnerId ?? "unknown", code).value++;
    else if (status === 401) authFailures.cell(outcome?.partnerId ?? "unknown", code).value++;
    if (route === EVENTS_ROUTE) {
      const what =
        status >= 500
          ? "failed"
          : status >= 400
            ? "refused"
            : outcome?.headers["idempotent-replayed"] === "true"
              ? "duplicate"
              : "accepted";
      eventCells[what].value++;
    }
  };

  const instrument = <T extends object>(store: string, port: T): T => {
    const wrappers = new Map<PropertyKey, unknown>();
    return new Proxy(port, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== "function" || property === "constructor" || typeof property === "symbol")
          return value;
        let wrapper = wrappers.get(property);
        if (wrapper === undefined) {
          wrapper = timed(
            target,
            value as (...args: unknown[]) => unknown,
            storeCalls.cell(store, property),
            (kind) => storeErrors.cell(store, property, kind).value++,
          );
          wrappers.set(property, wrapper);
        }
        return wrapper;
      },
    });
  };

  return {
    registry,
    requestDone,
    instrument,
    setStoreChecks: (checks) => {
      storeChecks = checks;
    },
    setPool,
    setReadCache,
    setPriceAges,
    setEventLog,
  };
}

/** The route label of a request no core route took: the adapter's own endpoints, or unmatched. */
function opsRoute(path: string): string {
  if (path === "/healthz" || path === "/readyz") return `GET ${path}`;
  return "unmatched";
}

/**
 * `method` called on `target`, its duration observed and its failure counted; a method that
 * answers at once (a `MaybePromise` port in memory) still answers at once.
 */
function timed(
  target: object,
  method: (...args: unknown[]) => unknown,
  histogram: { observe(v: number): void },
  failed: (kind: string) => void,
): (...args: unknown[]) => unknown {
  const kindOf = (error: unknown) => (error instanceof StoreUnavailableError ? "unavailable" : "error");
  return (...args: unknown[]) => {
    const started = performance.now();
    let result: unknown;
    try {
      result = method.apply(target, args);
    } catch (error) {
      histogram.observe((performance.now() - started) / 1000);
      failed(kindOf(error));
      throw error;
    }
    if (result instanceof Promise) {
      return result.then(
        (value) => {
          histogram.observe((performance.now() - started) / 1000);
          return value;
        },
        (error: unknown) => {
          histogram.observe((performance.now() - started) / 1000);
          failed(kindOf(error));
          throw error;
        },
      );
    }
    histogram.observe((performance.now() - started) / 1000);
    return result;
  };
}

async function runCheck(check: () => Promise<void>): Promise<number> {
  try {
    return (await settlesWithin(check(), STORE_CHECK_MS)) ? 1 : 0;
  } catch {
    return 0;
  }
}
