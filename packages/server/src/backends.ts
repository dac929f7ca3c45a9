/**
 * Where `partner-yield serve` keeps its state: the fixtures and in-memory stores by default;
 * PostgreSQL with `--database-url` (events, keys, partners, secrets, products, vaults, prices) and
 * Redis with `--redis-url` (rate limits). The store packages are imported only when their flag is
 * given, so a server on the defaults loads neither driver.
 * @module
 */
import {
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_MAX_EVENTS,
  type EventStore,
  type KeyStore,
  MemoryEventStore,
  type PartnerStore,
  type PositionSource,
  type PriceSource,
  type ProductRecord,
  type ProductSource,
  type RateLimiter,
} from "@partner-yield/core";
import { loadFixtureDir } from "@partner-yield/node-adapter";
import type { PostgresPriceTable, PostgresStores } from "@partner-yield/store-postgres";
import type { BannerData } from "./banner.js";
import { FallbackRateLimiter } from "./fallback-limiter.js";
import { watchPool } from "./pool-readiness.js";
import { redactUrl } from "./redact-url.js";

export interface Backends {
  readonly events: EventStore | undefined;
  readonly rateLimiter: RateLimiter | undefined;
  readonly keys: KeyStore;
  readonly partners: PartnerStore;
  readonly products: ProductSource;
  readonly positions: PositionSource;
  readonly prices: PriceSource;
  /** The prices with their update times, where the store keeps them (PostgreSQL); see chain-sources. */
  readonly priceTable: PostgresPriceTable | undefined;
  /** What the banner shows (demo credentials, example slug, counts). */
  readonly banner: BannerData;
  /** One line per store: what holds it. */
  readonly description: readonly string[];
  /** `/readyz`: each store's check (reported; a shared store down does not fail it). */
  readonly readinessChecks: Readonly<Record<string, () => Promise<void>>>;
  /** `/readyz`: this instance's own state (`database_pool`: its pool exhausted), which fails it. */
  readonly instanceChecks?: Readonly<Record<string, () => string>> | undefined;
  /** What the operator should know before serving (e.g. Redis's eviction policy could not be read). */
  readonly warnings: readonly string[];
  /** With `databaseUrl`: the pool and the read cache, for the metrics (metrics-postgres.ts). */
  readonly postgres: PostgresHandles | undefined;
}

export interface PostgresHandles {
  readonly pool: PostgresStores["pool"];
  readonly readCache: PostgresStores["readCache"];
}

export interface BackendOptions {
  readonly fixturesDir: string;
  /** False when prices come from a price table, not from the fixtures' prices.json. */
  readonly fixturePricesServed?: boolean | undefined;
  readonly databaseUrl: string | undefined;
  /**
   * With `databaseUrl`: a read cache in this process, kept current by LISTEN/NOTIFY (store-postgres
   * read-cache.ts). Default true.
   */
  readonly readCache?: boolean | undefined;
  readonly redisUrl: string | undefined;
  /** Bounds of the in-memory event store (without `databaseUrl`); default the core's. */
  readonly maxEvents?: number | undefined;
  readonly maxEventBytes?: number | undefined;
  /** Prefix of the rate-limit keys in Redis. */
  readonly redisKeyPrefix?: string | undefined;
  /**
   * Told when Redis stops answering and the rate limits are counted in this process, with the
   * same quotas (`local` true, with the reason), and when Redis answers again (fallback-limiter.ts).
   */
  readonly onRateLimitSwitch?: ((local: boolean, reason: string) => void) | undefined;
  /** With `databaseUrl`: the pool's size and timeouts (`--pg-pool-size`, …); default store-postgres's. */
  readonly postgresPool?:
    | {
        readonly max?: number | undefined;
        readonly statementTimeoutMs?: number | undefined;
        readonly connectionTimeoutMs?: number | undefined;
      }
    | undefined;
  /**
   * With `databaseUrl`: refuse to start without a key for the signing secrets at rest
   * (PARTNER_YIELD_SECRET_KEYS; production). Default false.
   */
  readonly requireSecretKeys?: boolean | undefined;
  /** Connection errors of idle connections (the pools reconnect by themselves). */
  readonly onConnectionError?: ((store: "postgres" | "redis", error: Error) => void) | undefined;
}

const ROLES = ["events", "keys", "partners", "products", "positions", "prices"] as const;

/**
 * Opens the stores the options ask for.
 * @throws FixtureError for a bad fixture (in-memory data only), SchemaVersionError for a database
 *   whose schema is not this code's, StoreUnavailableError when PostgreSQL or Redis cannot be reached,
 *   EvictionPolicyError when Redis may evict the limiter's keys (a `maxmemory-policy` other than
 *   `noeviction`: store-redis eviction-policy.ts).
 */
export async function openBackends(options: BackendOptions): Promise<Backends> {
  const ok = () => Promise.resolve();
  let storeWarnings: readonly string[] = [];
  let postgresHandles: PostgresHandles | undefined;
  let data: Omit<Backends, "rateLimiter" | "readinessChecks" | "description" | "warnings" | "postgres"> & {
    readonly checks: Record<string, () => Promise<void>>;
    readonly line: string;
    /** What the banner says of the read cache (PostgreSQL only). */
    readonly cacheLine?: string | undefined;
    readonly close: () => Promise<void>;
  };
  if (options.databaseUrl === undefined) {
    const fixtures = loadFixtureDir(options.fixturesDir, {
      requirePrices: options.fixturePricesServed !== false,
    });
    data = {
      events: new MemoryEventStore({ maxEvents: options.maxEvents, maxEventBytes: options.maxEventBytes }),
      priceTable: undefined,
      ...fixtures,
      banner: fixtures,
      checks: Object.fromEntries(ROLES.map((role) => [role, ok])),
      line: `fixtures ${options.fixturesDir} and in-memory stores (this process only; events are lost on exit; at most ${options.maxEvents ?? DEFAULT_MAX_EVENTS} events or ${options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES} bytes)`,
      close: ok,
    };
  } else {
    const postgres = await import("@partner-yield/store-postgres");
    const cached = options.readCache !== false;
    const stores = await postgres.openPostgresStores(
      {
        connectionString: options.databaseUrl,
        ...options.postgresPool,
        onIdleError: (error) => options.onConnectionError?.("postgres", error),
      },
      {
        secretKeys: postgres.SecretKeyring.fromEnv(process.env),
        requireSecretKeys: options.requireSecretKeys,
        readCache: cached && {
          // Its loss is no failure (reads go to the database until it is back), but worth a line.
          onStateChange: (state) => {
            if (!state.listening)
              options.onConnectionError?.(
                "postgres",
                new Error(
                  `the read cache's listening connection was lost (${state.lastError ?? "no reason given"}); every read goes to PostgreSQL until it is back`,
                ),
              );
          },
        },
      },
    );
    storeWarnings = stores.warnings;
    postgresHandles = { pool: stores.pool, readCache: stores.readCache };
    try {
      const partnerIds = await postgres.listPartnerIds(stores.pool);
      const productRecords: ProductRecord[] = [];
      for (const id of partnerIds) productRecords.push(...(await stores.products.listProducts(id)));
      data = {
        ...stores,
        // Aged prices (--rpc-url, --price-max-age) are read on every request: /readyz and a
        // position then fail together when the table cannot be read.
        priceTable: new postgres.PostgresPriceTable(stores.pool),
        banner: { keys: stores.keys, partners: stores.partners, partnerList: partnerIds, productRecords },
        checks: Object.fromEntries(ROLES.map((role) => [role, stores.ping])),
        line: `PostgreSQL ${redactUrl(options.databaseUrl)} (${partnerIds.length} partners, ${productRecords.length} products)`,
        cacheLine: cached
          ? "on in this process (keys, partners, secrets, products, holdings, prices): a change is served within 100 ms of its commit while its LISTEN connection is up; every read goes to PostgreSQL while it is down"
          : "off (--read-cache off): every request reads PostgreSQL",
        close: stores.close,
      };
    } catch (error) {
      await stores.close();
      throw error;
    }
  }
  // The pool's counters, sampled while the process runs (an unref'd timer; pool-readiness.ts).
  const poolWatch = "pool" in data ? watchPool(data.pool as Parameters<typeof watchPool>[0]) : undefined;
  let rateLimiter: RateLimiter | undefined;
  let limiterCheck: () => Promise<void> = ok;
  let limiterLine = "in-memory (this process only: each instance counts its own)";
  const warnings: string[] = [...storeWarnings];
  if (options.redisUrl !== undefined) {
    try {
      const redisStore = await import("@partner-yield/store-redis");
      const redis = await redisStore.connectRedis({
        url: options.redisUrl,
        onError: (error) => options.onConnectionError?.("redis", error),
      });
      let policy: Awaited<ReturnType<typeof redisStore.checkEvictionPolicy>>;
      try {
        policy = await redisStore.checkEvictionPolicy(redis);
      } catch (error) {
        redis.disconnect();
        throw error;
      }
      if (!policy.checked)
        warnings.push(
          `could not read Redis's maxmemory-policy (${policy.reason}); it must be noeviction, else Redis may evict rate-limit keys under memory pressure and reset a partner's quota or a client's failed-authentication count`,
        );
      // Event intake never depends on Redis (CONTRACT §7): while it is down, each instance counts
      // the same quotas itself, and goes back to Redis when it answers.
      const limiter = new FallbackRateLimiter({
        primary: new redisStore.RedisRateLimiter({
          redis,
          ownsClient: true,
          keyPrefix: options.redisKeyPrefix,
        }),
        onSwitch: options.onRateLimitSwitch,
      });
      rateLimiter = limiter;
      limiterCheck = () => limiter.ping();
      limiterLine = `Redis ${redactUrl(options.redisUrl)} (shared by every instance; maxmemory-policy ${policy.checked ? policy.policy : "not checked"}; while it is down each instance counts the same quotas itself)`;
    } catch (error) {
      await data.close();
      throw error;
    }
  }
  return {
    events: data.events,
    rateLimiter,
    keys: data.keys,
    partners: data.partners,
    products: data.products,
    positions: data.positions,
    prices: data.prices,
    priceTable: data.priceTable,
    banner: data.banner,
    description: [
      `data and events: ${data.line}`,
      `rate limits: ${limiterLine}`,
      ...(data.cacheLine === undefined ? [] : [`read cache: ${data.cacheLine}`]),
    ],
    readinessChecks: { ...data.checks, rate_limits: limiterCheck },
    instanceChecks: poolWatch === undefined ? undefined : { database_pool: poolWatch.state },
    warnings,
    postgres: postgresHandles,
  };
}
