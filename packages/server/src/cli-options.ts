/**
 * The command line of `partner-yield`: flags, their environment variables and defaults, in ONE
 * table that drives both parsing (`util.parseArgs`, strict) and `--help`.
 * @module
 */
import { parseArgs } from "node:util";
import { getHeapStatistics } from "node:v8";
import {
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_MAX_EVENTS,
  type Environment,
  EVM_CHAINS,
} from "@partner-yield/core";
import { DEFAULT_IPV6_PREFIX_LENGTH, echoInput } from "@partner-yield/core/adapters";
import {
  type ConnectionLimits,
  DEFAULT_CROWDED_IDLE_TIMEOUT_MS,
  DEFAULT_FIXTURES_DIR,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_TIMEOUTS,
  defaultInstanceId,
  type ServerTimeouts,
} from "@partner-yield/node-adapter";
import { argsErrorMessage } from "./args-error.js";
import { DEFAULT_HEAP_GROWTH_PERCENT } from "./heap-growth.js";

/** A command line that cannot be run: the message says why; the CLI exits with status 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export interface ServeConfig {
  readonly host: string;
  readonly port: number;
  /** `/metrics` on a port of its own (`--metrics-port`, `--metrics-host`); undefined: none. */
  readonly metrics: { readonly host: string; readonly port: number } | undefined;
  readonly environment: Environment;
  readonly fixturesDir: string;
  readonly bodyLimitBytes: number;
  /** Undefined: each partner's own quota. */
  readonly rateLimitQuota: number | undefined;
  readonly timeouts: ServerTimeouts;
  /** On SIGTERM/SIGINT, how long `/readyz` is 503 while the server still serves (`--drain-delay`). */
  readonly drainDelayMs: number;
  /** Connection caps; `maxConnections` undefined: three quarters of the open-files limit. */
  readonly connections: ConnectionLimits;
  readonly log: "json" | "none";
  /** Names this process in every log line (`--instance-id`; default `hostname-pid`). */
  readonly instanceId: string;
  /** Log `/healthz` and `/readyz` requests too (`--log-health-checks`). */
  readonly logHealthChecks: boolean;
  /** The human banner on stdout (`--banner`): `auto` prints it in the sandbox or on a terminal. */
  readonly banner: "auto" | "on" | "off";
  /** PostgreSQL for events, keys, partners, products…; undefined: fixtures and in-memory stores. */
  readonly databaseUrl: string | undefined;
  /** With `databaseUrl`: the pool's size and timeouts (`--pg-pool-size`, `--pg-statement-timeout`, `--pg-connect-timeout`). */
  readonly postgresPool: {
    readonly max: number;
    readonly statementTimeoutMs: number;
    readonly connectionTimeoutMs: number;
  };
  /** With `databaseUrl`: each instance's read cache, kept current by LISTEN/NOTIFY (`--read-cache`). */
  readonly readCache: boolean;
  /** Bounds of the in-memory event store (without `databaseUrl`). */
  readonly maxEvents: number;
  readonly maxEventBytes: number;
  /** Redis for the rate limits; undefined: the in-memory limiter of this process. */
  readonly redisUrl: string | undefined;
  /** Prefix of the rate-limit keys in Redis. */
  readonly redisKeyPrefix: string;
  /**
   * Positions and metrics from chain (`--rpc-url`) and aged prices (`--price-table`, or the
   * database's with `--database-url`); undefined: neither.
   */
  readonly chain: ChainServeConfig | undefined;
  /** V8's heap growing factor less 1, in percent (`setHeapGrowth`); 0: V8's own. */
  readonly heapGrowthPercent: number;
}

/** What `--rpc-url`, `--price-table`, `--price-max-age` and `--apy-window-blocks` ask for. */
export interface ChainServeConfig {
  readonly rpcUrls: readonly { readonly chain: string; readonly chainId: number; readonly url: string }[];
  /**
   * JSON file of prices with their update times; undefined: the database's table with
   * `--database-url`, else the fixtures' prices.json (no update times, not aged).
   */
  readonly priceTable: string | undefined;
  readonly priceMaxAgeSeconds: number;
  /** Undefined: about a day of blocks on each chain. */
  readonly apyWindowBlocks: number | undefined;
}

export type Command =
  | { readonly command: "help" }
  | { readonly command: "serve"; readonly config: ServeConfig };

interface Flag {
  readonly flag: string;
  /** May be given several times; its variable then holds a comma-separated list. */
  readonly multiple?: boolean;
  readonly env: string;
  readonly value: string;
  readonly help: string;
  readonly default: string;
}

const MAX_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * 5 s: a load balancer polling `/readyz` every 1-2 s (two failures to mark a target down) has
 * stopped sending new connections by then; the whole shutdown stays inside a 30 s grace period.
 */
export const DEFAULT_DRAIN_DELAY_MS = 5000;

/**
 * The default of `--max-event-bytes`: 256 MiB, or half of this process's heap limit when that is
 * smaller (`--max-old-space-size=128` gives node a 176 MiB limit, so 88 MiB), so the bound is
 * reached before the heap is.
 */
export function defaultMaxEventBytes(heapLimit = getHeapStatistics().heap_size_limit): number {
  return Math.min(DEFAULT_MAX_EVENT_BYTES, Math.floor(heapLimit / 2));
}

/** Every flag of `serve`, with its environment variable. Flags win over the environment. */
export const SERVE_FLAGS: readonly Flag[] = [
  {
    flag: "port",
    env: "PORT",
    value: "N",
    default: "8787",
    help: "TCP port; 0 picks a free one (the banner prints it)",
  },
  {
    flag: "host",
    env: "PARTNER_YIELD_HOST",
    value: "ADDR",
    default: "127.0.0.1",
    help: "address to bind; 0.0.0.0 for every interface",
  },
  {
    flag: "metrics-port",
    env: "PARTNER_YIELD_METRICS_PORT",
    value: "N",
    default: "none: no metrics",
    help: "serve Prometheus metrics at /metrics on this port, apart from the API's (0 picks a free one; the banner prints it)",
  },
  {
    flag: "metrics-host",
    env: "PARTNER_YIELD_METRICS_HOST",
    value: "ADDR",
    default: "127.0.0.1",
    help: "address the metrics port binds (with --metrics-port); the series name partners: keep it private",
  },
  {
    flag: "env",
    env: "PARTNER_YIELD_ENV",
    value: "ENV",
    default: "sandbox",
    help: "environment served: sandbox | production",
  },
  {
    flag: "fixtures",
    env: "PARTNER_YIELD_FIXTURES",
    value: "DIR",
    default: "the repository's fixtures/",
    help: "directory with partners.json, products.json, vaults.json, prices.json",
  },
  {
    flag: "body-limit",
    env: "PARTNER_YIELD_BODY_LIMIT",
    value: "BYTES",
    default: "65536",
    help: "largest event body; larger is 413 payload_too_large",
  },
  {
    flag: "headers-timeout",
    env: "PARTNER_YIELD_HEADERS_TIMEOUT_MS",
    value: "MS",
    default: String(DEFAULT_TIMEOUTS.headersTimeoutMs),
    help: "time to send the request headers, then 408 (cuts slowloris clients)",
  },
  {
    flag: "request-timeout",
    env: "PARTNER_YIELD_REQUEST_TIMEOUT_MS",
    value: "MS",
    default: String(DEFAULT_TIMEOUTS.requestTimeoutMs),
    help: "time to send the whole request, body included (≥ headers timeout)",
  },
  {
    flag: "keep-alive-timeout",
    env: "PARTNER_YIELD_KEEP_ALIVE_TIMEOUT_MS",
    value: "MS",
    default: String(DEFAULT_TIMEOUTS.keepAliveTimeoutMs),
    help: "idle time before a keep-alive connection is closed (> a load balancer's 60 s)",
  },
  {
    flag: "shutdown-timeout",
    env: "PARTNER_YIELD_SHUTDOWN_TIMEOUT_MS",
    value: "MS",
    default: String(DEFAULT_TIMEOUTS.shutdownTimeoutMs),
    help: "on SIGTERM/SIGINT, how long requests in flight may finish (the whole shutdown, stores closed: at most about twice this)",
  },
  {
    flag: "drain-delay",
    env: "PARTNER_YIELD_DRAIN_DELAY_MS",
    value: "MS",
    default: String(DEFAULT_DRAIN_DELAY_MS),
    help: "on SIGTERM/SIGINT, /readyz answers 503 at once but the server keeps accepting and serving (each answer with Connection: close) this long, so a load balancer takes it out of rotation before it stops accepting; 0: stop at once",
  },
  {
    flag: "max-connections",
    env: "PARTNER_YIELD_MAX_CONNECTIONS",
    value: "N",
    default: "three quarters of the open-files limit (ulimit -n)",
    help: "most connections open at once; beyond it a new one closes the longest-idle one, or is closed at once when none is idle",
  },
  {
    flag: "max-connections-per-address",
    env: "PARTNER_YIELD_MAX_CONNECTIONS_PER_ADDRESS",
    value: "N",
    default: String(DEFAULT_MAX_CONNECTIONS_PER_ADDRESS),
    help: "most connections open at once from one client address; beyond it a new one is closed at once",
  },
  {
    flag: "ipv6-prefix-length",
    env: "PARTNER_YIELD_IPV6_PREFIX_LENGTH",
    value: "BITS",
    default: String(DEFAULT_IPV6_PREFIX_LENGTH),
    help: "an IPv6 client counts by this prefix of its address (1-128) in the connections per address and the failed-authentication limit: one customer's /64 is one address; an IPv4-mapped address is its IPv4 address",
  },
  {
    flag: "crowded-idle-timeout",
    env: "PARTNER_YIELD_CROWDED_IDLE_TIMEOUT_MS",
    value: "MS",
    default: String(DEFAULT_CROWDED_IDLE_TIMEOUT_MS),
    help: "idle time before a connection is closed while ≥ 3/4 of --max-connections are open; then /healthz, /readyz, 401 and 429 answers close their connection too",
  },
  {
    flag: "rate-limit-quota",
    env: "PARTNER_YIELD_RATE_LIMIT_QUOTA",
    value: "N",
    default: "each partner's (sandbox 100, production 1000)",
    help: "override every partner's requests per minute, for QA and load runs (the limiter still runs)",
  },
  {
    flag: "heap-growth",
    env: "PARTNER_YIELD_HEAP_GROWTH_PERCENT",
    value: "PERCENT",
    default: String(DEFAULT_HEAP_GROWTH_PERCENT),
    help: "how far the JS heap may grow between full collections, in percent of what the last one kept (V8's --heap-growing-percent), e.g. 100 for a flatter RSS at the cost of more full collections; 0: V8's own choice, up to 300 %",
  },
  {
    flag: "log",
    env: "PARTNER_YIELD_LOG",
    value: "FORMAT",
    default: "json",
    help: "request log on stdout, unexpected errors on stderr: json | none",
  },
  {
    flag: "instance-id",
    env: "PARTNER_YIELD_INSTANCE_ID",
    value: "ID",
    default: "HOSTNAME-PID",
    help: 'names this process in every log line ("instance"): 1 to 128 of A-Z a-z 0-9 . _ : -',
  },
  {
    flag: "log-health-checks",
    env: "PARTNER_YIELD_LOG_HEALTH_CHECKS",
    value: "on|off",
    default: "off",
    help: "log /healthz and /readyz requests too (a probe every second is noise otherwise)",
  },
  {
    flag: "banner",
    env: "PARTNER_YIELD_BANNER",
    value: "auto|on|off",
    default: "auto",
    help: "the human banner on stdout (URL, stores, demo credentials, curl examples); auto: in the sandbox or when stdout is a terminal, so a production log collector reads JSON only",
  },
  {
    flag: "database-url",
    env: "DATABASE_URL",
    value: "URL",
    default: "none: the fixtures and in-memory stores",
    help: "PostgreSQL (postgres://…) for events, keys, partners, secrets, products, metrics, vaults and prices, instead of the fixtures; run `partner-yield db migrate` and `db import-fixtures DIR` first",
  },
  {
    flag: "read-cache",
    env: "PARTNER_YIELD_READ_CACHE",
    value: "on|off",
    default: "on",
    help: "with --database-url: keys, partners, secrets, products, holdings and prices cached in each instance, kept current by PostgreSQL LISTEN/NOTIFY (a change is served within 100 ms of its commit; while the listening connection is down every read goes to the database); off: every request reads PostgreSQL",
  },
  {
    flag: "pg-pool-size",
    env: "PARTNER_YIELD_PG_POOL_SIZE",
    value: "N",
    default: "10",
    help: "with --database-url: most PostgreSQL connections this instance opens (keep instances x N below the server's max_connections)",
  },
  {
    flag: "pg-statement-timeout",
    env: "PARTNER_YIELD_PG_STATEMENT_TIMEOUT_MS",
    value: "MS",
    default: "5000",
    help: "with --database-url: longest a statement may run (on the server, and on the client plus 1 s); past it the request is 503",
  },
  {
    flag: "pg-connect-timeout",
    env: "PARTNER_YIELD_PG_CONNECT_TIMEOUT_MS",
    value: "MS",
    default: "2000",
    help: "with --database-url: longest a request waits for a connection (a free one from the pool, or a new one); past it 503",
  },
  {
    flag: "max-events",
    env: "PARTNER_YIELD_MAX_EVENTS",
    value: "N",
    default: String(DEFAULT_MAX_EVENTS),
    help: "most events the in-memory event store holds; a new event past it is 503 event_store_full (a duplicate is still answered). Not with --database-url",
  },
  {
    flag: "max-event-bytes",
    env: "PARTNER_YIELD_MAX_EVENT_BYTES",
    value: "BYTES",
    default: `${DEFAULT_MAX_EVENT_BYTES} (256 MiB), or half the heap limit when that is smaller`,
    help: "most bytes of memory the in-memory event store's events take, as it counts them (an upper estimate of the heap); past it 503 event_store_full. Not with --database-url",
  },
  {
    flag: "redis-url",
    env: "REDIS_URL",
    value: "URL",
    default: "none: an in-memory limiter per process",
    help: "Redis (redis://…) for the rate limits, shared by every instance",
  },
  {
    flag: "redis-key-prefix",
    env: "PARTNER_YIELD_REDIS_KEY_PREFIX",
    value: "TEXT",
    default: "partner-yield:rate:",
    help: "prefix of the rate-limit keys, so several deployments can share one Redis",
  },
  {
    flag: "rpc-url",
    env: "PARTNER_YIELD_RPC_URLS",
    value: "CHAIN=URL",
    multiple: true,
    default: "none: positions and metrics from the fixtures",
    help: "read positions and metrics of the products on CHAIN (name or id, e.g. base=http://127.0.0.1:8545) from its JSON-RPC node; repeatable",
  },
  {
    flag: "price-table",
    env: "PARTNER_YIELD_PRICE_TABLE",
    value: "FILE",
    default: "with --database-url its asset_prices table, else the fixtures' prices.json (no update times)",
    help: 'JSON prices with update times, re-read when it changes: [{"chain_id","asset_address","usd_price","updated_at"}]',
  },
  {
    flag: "price-max-age",
    env: "PARTNER_YIELD_PRICE_MAX_AGE",
    value: "SECONDS",
    default: "3600",
    help: "an older price (from --price-table, or from the database with --database-url and --rpc-url or this flag) is 503 service_unavailable, never served as current",
  },
  {
    flag: "apy-window-blocks",
    env: "PARTNER_YIELD_APY_WINDOW_BLOCKS",
    value: "N",
    default: "about a day of blocks on each chain",
    help: "blocks between the two share-price readings of the underlying APY (with --rpc-url)",
  },
];

/** The text of `partner-yield --help`. */
export function helpText(): string {
  const rows = SERVE_FLAGS.map(
    (f) =>
      [
        `  --${f.flag} ${f.value}`,
        f.env,
        `${f.help} (default: ${f.default}${f.multiple === true ? "; the variable: comma-separated" : ""})`,
      ] as const,
  );
  const w0 = Math.max(...rows.map((r) => r[0].length)) + 2;
  const w1 = Math.max(...rows.map((r) => r[1].length)) + 2;
  return [
    "partner-yield: the partner yield-products API on node:http",
    "",
    "Usage:",
    "  partner-yield serve [options]   start the server",
    "  partner-yield db COMMAND        migrate | import-fixtures DIR | status | rekey-secrets (`partner-yield db --help`)",
    "  partner-yield partners COMMAND  add | list | verify: partners (see `partner-yield partners --help`)",
    "  partner-yield keys COMMAND      create | list | revoke | promote: API keys (`partner-yield keys --help`)",
    "  partner-yield secrets COMMAND   create | list | revoke: signing secrets (`partner-yield secrets --help`)",
    "  partner-yield audit list        who ran which admin command, when, on what (`partner-yield audit --help`)",
    "  partner-yield events COMMAND    tail | consumers list|reset | prune: accepted events (`partner-yield events --help`)",
    "  partner-yield --help            this text",
    "",
    "With no options, `serve` serves the sandbox on 127.0.0.1:8787 from the embedded fixtures and",
    "in-memory stores, and prints the base URL, the demo credentials and curl examples.",
    "",
    `Options (flag, environment variable, meaning; a flag wins over its variable):`,
    ...rows.map(([flag, env, text]) => flag.padEnd(w0) + env.padEnd(w1) + text),
    `${"  -h, --help".padEnd(w0)}${"".padEnd(w1)}this text`,
    "",
    "Endpoints: /api/partner/… (the API; OpenAPI at /api/partner/openapi.json), /healthz, /readyz;",
    "with --metrics-port, /metrics (Prometheus text) on that port only.",
    "Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, OpenTelemetry spans go there over OTLP/HTTP",
    "(OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG honoured); unset, none are made.",
    "SIGTERM or SIGINT shuts down gracefully: /readyz answers 503 at once while the server still",
    "serves for --drain-delay, then no new connections, requests in flight finish (answered with",
    "Connection: close), then the stores close. A second signal exits at once.",
    "",
    "Exit status: 0 after a clean shutdown, 1 when the server cannot start (e.g. port in use),",
    "2 for a bad command line, environment variable or fixture file.",
    "",
  ].join("\n");
}

/**
 * Parses `argv` (without node and the script) and the environment.
 * @throws UsageError for an unknown flag, a missing command or a bad value.
 * @example parseCommandLine(["serve", "--port", "0"], {}); // { command: "serve", config: { port: 0, … } }
 */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Command {
  let parsed: ReturnType<typeof parseFlags>;
  try {
    parsed = parseFlags(argv);
  } catch (error) {
    throw new UsageError(argsErrorMessage(error));
  }
  const { positionals } = parsed;
  const values = parsed.values as Record<string, string | string[] | boolean | undefined>;
  if (values["help"] === true) return { command: "help" };
  if (positionals.length === 0) throw new UsageError("missing command; did you mean `partner-yield serve`?");
  if (positionals[0] !== "serve")
    throw new UsageError(
      `unknown command ${echoInput(positionals[0]!)}; the commands are serve, db, partners, keys and secrets`,
    );
  if (positionals.length > 1) throw new UsageError(`unexpected argument ${echoInput(positionals[1]!)}`);

  const raw = (flag: string): { value: string; source: string } | undefined => {
    const fromFlag = values[flag];
    if (Array.isArray(fromFlag))
      return fromFlag.length === 0 ? undefined : { value: fromFlag.join(","), source: `--${flag}` };
    if (typeof fromFlag === "string") return { value: fromFlag, source: `--${flag}` };
    const spec = SERVE_FLAGS.find((f) => f.flag === flag)!;
    const fromEnv = env[spec.env];
    return fromEnv === undefined || fromEnv === "" ? undefined : { value: fromEnv, source: spec.env };
  };
  const integer = (flag: string, min: number, max: number, fallback: number): number => {
    const given = raw(flag);
    if (given === undefined) return fallback;
    if (!/^[0-9]+$/.test(given.value) || Number(given.value) < min || Number(given.value) > max) {
      throw new UsageError(
        `${given.source} must be an integer from ${min} to ${max}, not ${echoInput(given.value)}`,
      );
    }
    return Number(given.value);
  };
  const choice = <T extends string>(flag: string, allowed: readonly T[], fallback: T): T => {
    const given = raw(flag);
    if (given === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(given.value)) {
      throw new UsageError(
        `${given.source} must be one of ${allowed.join(", ")}, not ${echoInput(given.value)}`,
      );
    }
    return given.value as T;
  };

  const DAY_MS = 86_400_000;
  const timeouts: ServerTimeouts = {
    headersTimeoutMs: integer("headers-timeout", 1, DAY_MS, DEFAULT_TIMEOUTS.headersTimeoutMs),
    requestTimeoutMs: integer("request-timeout", 1, DAY_MS, DEFAULT_TIMEOUTS.requestTimeoutMs),
    keepAliveTimeoutMs: integer("keep-alive-timeout", 1, DAY_MS, DEFAULT_TIMEOUTS.keepAliveTimeoutMs),
    shutdownTimeoutMs: integer("shutdown-timeout", 1, DAY_MS, DEFAULT_TIMEOUTS.shutdownTimeoutMs),
  };
  if (timeouts.headersTimeoutMs > timeouts.requestTimeoutMs) {
    throw new UsageError(
      `the headers timeout (${timeouts.headersTimeoutMs} ms) must not exceed the request timeout (${timeouts.requestTimeoutMs} ms)`,
    );
  }
  const host = raw("host")?.value ?? "127.0.0.1";
  const quota =
    raw("rate-limit-quota") === undefined ? undefined : integer("rate-limit-quota", 1, 1_000_000_000, 1);
  const url = (flag: string, schemes: readonly string[]): string | undefined => {
    const given = raw(flag);
    if (given === undefined) return undefined;
    if (!schemes.some((scheme) => given.value.startsWith(`${scheme}://`)) || !URL.canParse(given.value)) {
      throw new UsageError(`${given.source} must be a ${schemes.join(":// or ")}:// URL`);
    }
    return given.value;
  };
  const databaseUrl = url("database-url", ["postgres", "postgresql"]);
  for (const flag of ["max-events", "max-event-bytes"]) {
    const given = raw(flag);
    if (given !== undefined && databaseUrl !== undefined)
      throw new UsageError(
        `${given.source} bounds the in-memory event store; with --database-url events go to PostgreSQL`,
      );
  }
  for (const flag of ["pg-pool-size", "pg-statement-timeout", "pg-connect-timeout"]) {
    const given = raw(flag);
    if (given !== undefined && databaseUrl === undefined)
      throw new UsageError(`${given.source} applies only with --database-url`);
  }
  const postgresPool = {
    max: integer("pg-pool-size", 1, 10_000, 10),
    statementTimeoutMs: integer("pg-statement-timeout", 1, DAY_MS, 5000),
    connectionTimeoutMs: integer("pg-connect-timeout", 1, DAY_MS, 2000),
  };
  const port = integer("port", 0, 65_535, 8787);
  const metricsHostGiven = raw("metrics-host");
  const metrics =
    raw("metrics-port") === undefined
      ? undefined
      : { host: metricsHostGiven?.value ?? "127.0.0.1", port: integer("metrics-port", 0, 65_535, 0) };
  if (metrics === undefined && metricsHostGiven !== undefined)
    throw new UsageError(`${metricsHostGiven.source} applies only with --metrics-port`);
  if (metrics !== undefined && metrics.port !== 0 && metrics.port === port)
    throw new UsageError(
      `--metrics-port must differ from --port (${port}): the metrics are never served on the API's port`,
    );
  const readCache = choice("read-cache", ["on", "off"], "on") === "on";
  const readCacheGiven = raw("read-cache");
  if (readCacheGiven !== undefined && databaseUrl === undefined)
    throw new UsageError(`${readCacheGiven.source} applies only with --database-url`);
  return {
    command: "serve",
    config: {
      host,
      port,
      metrics,
      environment: choice("env", ["sandbox", "production"], "sandbox"),
      fixturesDir: raw("fixtures")?.value ?? DEFAULT_FIXTURES_DIR,
      bodyLimitBytes: integer("body-limit", 1, MAX_BODY_LIMIT, 65_536),
      rateLimitQuota: quota,
      timeouts,
      drainDelayMs: integer("drain-delay", 0, DAY_MS, DEFAULT_DRAIN_DELAY_MS),
      connections: {
        maxConnections:
          raw("max-connections") === undefined ? undefined : integer("max-connections", 1, 10_000_000, 1),
        maxConnectionsPerAddress: integer(
          "max-connections-per-address",
          1,
          10_000_000,
          DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
        ),
        crowdedIdleTimeoutMs: integer("crowded-idle-timeout", 1, DAY_MS, DEFAULT_CROWDED_IDLE_TIMEOUT_MS),
        ipv6PrefixLength: integer("ipv6-prefix-length", 1, 128, DEFAULT_IPV6_PREFIX_LENGTH),
      },
      log: choice("log", ["json", "none"], "json"),
      instanceId: instanceId(raw("instance-id")),
      logHealthChecks: choice("log-health-checks", ["on", "off"], "off") === "on",
      banner: choice("banner", ["auto", "on", "off"], "auto"),
      databaseUrl,
      postgresPool,
      readCache,
      maxEvents: integer("max-events", 1, Number.MAX_SAFE_INTEGER, DEFAULT_MAX_EVENTS),
      maxEventBytes: integer("max-event-bytes", 1, Number.MAX_SAFE_INTEGER, defaultMaxEventBytes()),
      redisUrl: url("redis-url", ["redis", "rediss"]),
      redisKeyPrefix: raw("redis-key-prefix")?.value ?? "partner-yield:rate:",
      chain: chainConfig(raw, integer, raw("database-url") !== undefined),
      heapGrowthPercent: integer("heap-growth", 0, 1000, DEFAULT_HEAP_GROWTH_PERCENT),
    },
  };
}

/** `--instance-id`, or `hostname-pid` (request-log.ts `defaultInstanceId`). */
function instanceId(given: { value: string; source: string } | undefined): string {
  if (given === undefined) return defaultInstanceId();
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(given.value))
    throw new UsageError(
      `${given.source} must be 1 to 128 of A-Z a-z 0-9 . _ : -, not ${echoInput(given.value)}`,
    );
  return given.value;
}

function chainConfig(
  raw: (flag: string) => { value: string; source: string } | undefined,
  integer: (flag: string, min: number, max: number, fallback: number) => number,
  database: boolean,
): ChainServeConfig | undefined {
  const given = raw("rpc-url");
  const rpcUrls: { chain: string; chainId: number; url: string }[] = [];
  for (const item of given === undefined ? [] : given.value.split(",")) {
    const entry = item.trim();
    const eq = entry.indexOf("=");
    if (eq <= 0)
      throw new UsageError(
        `${given!.source} takes CHAIN=URL (e.g. base=http://127.0.0.1:8545), not ${echoInput(entry)}`,
      );
    const name = entry.slice(0, eq);
    const url = entry.slice(eq + 1);
    const byName = EVM_CHAINS[name];
    const byId = Object.entries(EVM_CHAINS).find(([, id]) => String(id) === name);
    const chain = byName === undefined ? byId : ([name, byName] as const);
    if (chain === undefined)
      throw new UsageError(
        `${given!.source}: unknown chain ${echoInput(name)}; use one of ${Object.entries(EVM_CHAINS)
          .map(([n, id]) => `${n} (${id})`)
          .join(", ")}`,
      );
    let parsedUrl: URL | undefined;
    try {
      parsedUrl = new URL(url);
    } catch {
      parsedUrl = undefined;
    }
    if (parsedUrl === undefined || (parsedUrl.protocol !== "http:" && parsedUrl.protocol !== "https:"))
      throw new UsageError(`${given!.source}: the RPC URL of ${chain[0]} must be an http(s) URL`);
    if (rpcUrls.some((r) => r.chainId === chain[1]))
      throw new UsageError(`${given!.source}: chain ${chain[0]} is given twice`);
    rpcUrls.push({ chain: chain[0], chainId: chain[1], url });
  }
  const priceTable = raw("price-table")?.value;
  const windowFlag = raw("apy-window-blocks");
  if (rpcUrls.length === 0 && windowFlag !== undefined)
    throw new UsageError(`${windowFlag.source} applies only with --rpc-url`);
  // With --database-url, --rpc-url or --price-max-age ages the database's prices.
  const maxAge = raw("price-max-age");
  if (rpcUrls.length === 0 && priceTable === undefined && (maxAge === undefined || !database)) {
    if (maxAge !== undefined)
      throw new UsageError(`${maxAge.source} applies only with --rpc-url, --price-table or --database-url`);
    return undefined;
  }
  const windowGiven = windowFlag !== undefined;
  return {
    rpcUrls,
    priceTable,
    priceMaxAgeSeconds: integer("price-max-age", 1, 31_536_000, 3600),
    apyWindowBlocks: windowGiven ? integer("apy-window-blocks", 1, 10_000_000, 1) : undefined,
  };
}

function parseFlags(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      ...Object.fromEntries(
        SERVE_FLAGS.map((f) => [f.flag, { type: "string" as const, multiple: f.multiple === true }]),
      ),
      help: { type: "boolean", short: "h" },
    },
  });
}
