/**
 * `partner-yield serve`: the server a user starts. Flags and variables in `cli-options.ts`;
 * exit status 0 after a clean shutdown, 1 when the server cannot start, 2 for a bad command line
 * or fixture. stdout holds the request log (after the banner, when shown: `--banner`); stderr
 * holds JSON lines only (server-log.ts: warnings, listening, shutting down, stopped; the error
 * log; stores down and up), except a command line refused before anything started (one plain line).
 * @module
 */
import { FixtureError, type Partner, StoreUnavailableError } from "@partner-yield/core";
import { escapeUnsafe } from "@partner-yield/core/adapters";
import {
  createNodePartnerApi,
  DEFAULT_FIXTURES_DIR,
  resolveStoreLog,
  setLogInstance,
  startServer,
} from "@partner-yield/node-adapter";
import { ADMIN_GROUPS, runAdminCommand } from "./admin-cli.js";
import { runAuditCommand } from "./audit-command.js";
import { type Backends, openBackends } from "./backends.js";
import { formatBanner } from "./banner.js";
import { helpText, parseCommandLine, type ServeConfig, UsageError } from "./cli-options.js";
import { missingDataSource } from "./data-source.js";
import { runDbCommand } from "./db-command.js";
import { runEventsCommand } from "./events-command.js";
import { setHeapGrowth } from "./heap-growth.js";
import type { MetricsServer } from "./metrics-server.js";
import {
  type PublishedCredential,
  publishedCredentialsMessage,
  publishedInDatabase,
  publishedInStores,
} from "./published-credentials.js";
import { redactConnectionText } from "./redact-url.js";
import { serverLogStarted, writeServerLog } from "./server-log.js";
import { type StoreWatch, watchStores } from "./store-watch.js";
import { otlpEndpoint, traceHandler, tracePorts } from "./tracing.js";

// A reader that stops early (`partner-yield --help | head`, a log pipe that died) is not an
// error: what it did not read is dropped, and a running server keeps serving.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;
/** After a clean shutdown, the longest the process waits for handles left open before it exits. */
const EXIT_GRACE_MS = 2000;

/**
 * The connection URLs this run was given (the command line and the variables that hold one): their
 * passwords are masked in every message it prints, whatever quoted them.
 */
const connectionUrls: readonly (string | undefined)[] = [
  ...process.argv.slice(2),
  process.env["DATABASE_URL"],
  process.env["REDIS_URL"],
];

async function main(argv: readonly string[]): Promise<void> {
  if (argv[0] === "db") {
    process.exitCode = await runDbCommand(argv.slice(1), process.env);
    return;
  }
  if (argv[0] === "audit") {
    process.exitCode = await runAuditCommand(argv.slice(1), process.env);
    return;
  }
  if (argv[0] === "events") {
    process.exitCode = await runEventsCommand(argv.slice(1), process.env);
    return;
  }
  const group = ADMIN_GROUPS.find((g) => g === argv[0]);
  if (group !== undefined) {
    process.exitCode = await runAdminCommand(group, argv.slice(1), { env: process.env });
    return;
  }
  let command: ReturnType<typeof parseCommandLine>;
  try {
    command = parseCommandLine(argv, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    fail(EXIT_USAGE, `${error.message}\nRun \`partner-yield --help\` for the options.`);
    return;
  }
  if (command.command === "help") {
    process.stdout.write(helpText());
    return;
  }
  await serve(command.config);
}

async function serve(config: ServeConfig): Promise<void> {
  setHeapGrowth(config.heapGrowthPercent);
  setLogInstance(config.instanceId);
  // Only with OTEL_EXPORTER_OTLP_ENDPOINT: a server without it never loads the OpenTelemetry SDK.
  let tracing: import("./otlp-tracing.js").TracingSetup | undefined;
  if (otlpEndpoint(process.env) !== undefined) {
    try {
      tracing = (await import("./otlp-tracing.js")).tracingFromEnvironment(process.env);
    } catch (error) {
      fail(EXIT_USAGE, `cannot start: ${(error as Error).message}`);
      return;
    }
  }
  const noData =
    config.databaseUrl === undefined
      ? missingDataSource(config.fixturesDir, config.fixturesDir === DEFAULT_FIXTURES_DIR)
      : undefined;
  if (noData !== undefined) {
    fail(EXIT_USAGE, `cannot start: ${noData}`);
    return;
  }
  let backends: Backends;
  try {
    backends = await openBackends({
      fixturesDir: config.fixturesDir,
      fixturePricesServed: config.chain?.priceTable === undefined,
      databaseUrl: config.databaseUrl,
      readCache: config.readCache,
      postgresPool: config.postgresPool,
      requireSecretKeys: config.environment === "production",
      redisUrl: config.redisUrl,
      redisKeyPrefix: config.redisKeyPrefix,
      maxEvents: config.maxEvents,
      maxEventBytes: config.maxEventBytes,
      onConnectionError: config.log === "none" ? undefined : logConnectionError,
      onRateLimitSwitch: logRateLimitSwitch,
    });
  } catch (error) {
    if (error instanceof FixtureError) {
      fail(EXIT_USAGE, `invalid fixtures: ${error.message}`);
      return;
    }
    // The schema check (SchemaVersionError), unreachable stores and a Redis that may evict the
    // limiter's keys (EvictionPolicyError): the message says what to do.
    const name = (error as Error).name;
    if (
      error instanceof StoreUnavailableError ||
      name === "SchemaVersionError" ||
      name === "SecretKeyError" ||
      name === "EvictionPolicyError"
    ) {
      fail(EXIT_FAILURE, `cannot start: ${(error as Error).message}`);
      return;
    }
    throw error;
  }
  const { banner: data, description, readinessChecks, priceTable, warnings, postgres, ...stores } = backends;
  for (const warning of warnings) writeServerLog("warn", "warning", { detail: warning });
  if (config.environment === "production") {
    // A published demo credential never unlocks production (CONTRACT §4, "Published credentials").
    let found: PublishedCredential[];
    try {
      found =
        config.databaseUrl === undefined
          ? await publishedInStores(
              stores.keys,
              stores.partners,
              data.partnerList.map((p) => (p as Partner).id),
            )
          : await publishedInPostgres(config.databaseUrl);
    } catch (error) {
      await closeStores(stores);
      fail(EXIT_FAILURE, `cannot start: ${(error as Error).message}`);
      return;
    }
    if (found.length > 0) {
      const source =
        config.databaseUrl === undefined ? `the fixtures in ${config.fixturesDir}` : "the database";
      await closeStores(stores);
      fail(EXIT_USAGE, publishedCredentialsMessage(found, "serve", source).trimEnd());
      return;
    }
  }
  // Only with --rpc-url / --price-table / --price-max-age: a server without them never loads viem.
  // The chain sources wrap whatever holds the products, positions and prices (fixtures or
  // PostgreSQL, whose prices they age).
  const chain =
    config.chain === undefined
      ? undefined
      : await (await import("./chain-sources.js")).createChainSources(
          config.chain,
          { ...stores, productRecords: data.productRecords, priceTable },
          (line) => writeServerLog("warn", "chain", { detail: redactConnectionText(line, connectionUrls) }),
        );
  // A store's going down and coming back: one line each (store-watch.ts), checked on suspicion.
  storeWatch =
    config.log === "none"
      ? undefined
      : watchStores({
          checks: { ...readinessChecks, ...chain?.readinessChecks },
          log: resolveStoreLog("json")!,
          redact: (text) => redactConnectionText(text, connectionUrls),
        });
  // With --metrics-port: every store call is timed, and /metrics listens before the API does.
  // prom-client is loaded only then.
  const metrics =
    config.metrics === undefined ? undefined : (await import("./metrics.js")).createServerMetrics();
  let scrape: MetricsServer | undefined;
  if (metrics !== undefined && config.metrics !== undefined) {
    metrics.setStoreChecks({ ...readinessChecks, ...chain?.readinessChecks });
    if (postgres !== undefined) (await import("./metrics-postgres.js")).watchPostgres(metrics, postgres);
    try {
      const { startMetricsServer } = await import("./metrics-server.js");
      scrape = await startMetricsServer({ registry: metrics.registry, ...config.metrics });
    } catch (error) {
      storeWatch?.close();
      await closeStores(stores);
      const e = error as NodeJS.ErrnoException;
      const why = e.code === "EADDRINUSE" ? "the address is already in use" : e.message;
      fail(
        EXIT_FAILURE,
        `cannot listen on ${config.metrics.host}:${config.metrics.port} (--metrics-port): ${why}`,
      );
      return;
    }
  }
  const port = <T extends object>(name: string, store: T): T => metrics?.instrument(name, store) ?? store;
  const ports = {
    events: stores.events && port("events", stores.events),
    rateLimiter: stores.rateLimiter && port("rate_limits", stores.rateLimiter),
    keys: port("keys", stores.keys),
    partners: port("partners", stores.partners),
    products: port("products", chain?.products ?? stores.products),
    positions: port("positions", chain?.positions ?? stores.positions),
    prices: port("prices", chain?.prices ?? stores.prices),
  };
  const api = createNodePartnerApi({
    onStoreError: storeWatch === undefined ? undefined : () => storeWatch?.suspect(),
    environment: config.environment,
    ...stores,
    // With tracing on, each store call that waits gets a span (tracing.ts).
    ...(tracing === undefined ? ports : tracePorts(ports, tracing.tracer)),
    bodyLimitBytes: config.bodyLimitBytes,
    rateLimitQuota: config.rateLimitQuota,
    ipv6PrefixLength: config.connections.ipv6PrefixLength,
    log: config.log,
  });
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      api,
      host: config.host,
      port: config.port,
      bodyLimitBytes: config.bodyLimitBytes,
      timeouts: config.timeouts,
      // With tracing on, each request gets a server span (tracing.ts).
      handler: tracing === undefined ? undefined : traceHandler(api, tracing),
      drainDelayMs: config.drainDelayMs,
      connections: config.connections,
      log: config.log,
      readinessChecks: { ...readinessChecks, ...chain?.readinessChecks },
      instanceChecks: backends.instanceChecks,
      logHealthChecks: config.logHealthChecks,
      requestDone: metrics?.requestDone,
    });
  } catch (error) {
    await scrape?.close();
    const e = error as NodeJS.ErrnoException;
    const why = e.code === "EADDRINUSE" ? "the address is already in use" : e.message;
    fail(EXIT_FAILURE, `cannot listen on ${config.host}:${config.port}: ${why}`);
    return;
  }
  writeServerLog("info", "listening", {
    url: server.url,
    environment: config.environment,
    stores: description,
    ...(scrape === undefined ? {} : { metrics_url: scrape.url }),
    ...(tracing === undefined ? {} : { traces: tracing.description }),
    pid: process.pid,
    node: process.version,
  });
  const banner =
    config.banner === "on" ||
    (config.banner === "auto" && (config.environment === "sandbox" || process.stdout.isTTY === true));
  if (banner)
    process.stdout.write(
      await formatBanner({
        url: server.url,
        environment: config.environment,
        fixturesDir: config.fixturesDir,
        data,
        bodyLimitBytes: config.bodyLimitBytes,
        rateLimitQuota: config.rateLimitQuota,
        stores: tracing === undefined ? description : [...description, `traces: ${tracing.description}`],
        sources:
          scrape === undefined
            ? chain?.summary
            : [...(chain?.summary ?? []), `  metrics ${scrape.url} (Prometheus text; this port only)`],
      }),
    );

  // The spans still buffered are exported (at most a few seconds) once the server has closed.
  const closeServer = () => server.close().finally(() => tracing?.shutdown());
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      writeServerLog("warn", "exiting", { signal, reason: "second signal: exiting without waiting" });
      process.exit(EXIT_FAILURE);
    }
    stopping = true;
    // /readyz 503 at once, still serving for the drain delay; then requests in flight get up to
    // the shutdown timeout, and the stores as long again.
    writeServerLog("info", "shutting_down", {
      signal,
      drain_delay_ms: config.drainDelayMs,
      in_flight: server.listener.inFlight,
      shutdown_timeout_ms: config.timeouts.shutdownTimeoutMs,
      at_most_ms: config.drainDelayMs + 2 * config.timeouts.shutdownTimeoutMs,
    });
    storeWatch?.close();
    closeServer().then(
      async () => {
        await scrape?.close();
        writeServerLog("info", "stopped");
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
        // Everything is closed: the process ends as soon as its output is written. A handle
        // something left open (a client library's reconnect timer) must not keep it alive.
        setTimeout(() => process.exit(process.exitCode ?? 0), EXIT_GRACE_MS).unref();
      },
      (error: unknown) => {
        writeServerLog("error", "shutdown_failed", {
          error: redactConnectionText(String(error), connectionUrls),
        });
        process.exit(EXIT_FAILURE);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/** The published credentials active in the database, over a connection of its own. */
async function publishedInPostgres(url: string): Promise<PublishedCredential[]> {
  const postgres = await import("@partner-yield/store-postgres");
  const pool = postgres.createPool({ connectionString: url, max: 1 });
  try {
    return await publishedInDatabase((text, values) => pool.query(text, [...values]));
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** Redis down or back for the rate limits (fallback-limiter.ts): one JSON line on stderr. */
function logRateLimitSwitch(local: boolean, reason: string): void {
  writeServerLog(local ? "warn" : "info", local ? "rate_limits_local" : "rate_limits_shared", {
    detail: local
      ? "rate limits counted per instance: Redis does not answer; each instance applies the same quotas itself until it does"
      : "rate limits shared again: Redis answers",
    reason: redactConnectionText(reason, connectionUrls),
  });
}

/** Closes every store `openBackends` opened (a server that will not start). */
async function closeStores(
  stores: Omit<
    Backends,
    "banner" | "description" | "readinessChecks" | "priceTable" | "warnings" | "postgres"
  >,
) {
  const closables = new Set<object | undefined>(Object.values(stores));
  await Promise.allSettled(
    [...closables].map((c) =>
      c !== undefined && "close" in c && typeof c.close === "function" ? c.close() : undefined,
    ),
  );
}

/**
 * The store watch of this server (`--log json`): told when a request met a store down, or a
 * connection broke, so the stores are checked and their going down and coming back logged.
 */
let storeWatch: StoreWatch | undefined;

/**
 * A broken idle connection (the pools reconnect by themselves), the read cache's listening one
 * lost: one JSON line on stderr, and the stores are checked.
 */
function logConnectionError(store: "postgres" | "redis", error: Error): void {
  writeServerLog("warn", "connection_error", {
    store,
    error: redactConnectionText(error.message, connectionUrls),
  });
  storeWatch?.suspect();
}

function fail(code: number, message: string): void {
  process.exitCode = code;
  // Once a JSON line was written (a warning), stderr stays JSON.
  if (serverLogStarted()) {
    writeServerLog("error", "cannot_start", { error: redactConnectionText(message, connectionUrls) });
    return;
  }
  // Escaped as written: whatever a message quotes (a value, a path, a driver's error) cannot send
  // the terminal a control sequence; echoed values are also cut (`echoInput`).
  const text = escapeUnsafe(redactConnectionText(message, connectionUrls), { keepNewlines: true });
  process.stderr.write(`partner-yield: ${text}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const text = redactConnectionText(
    error instanceof Error ? (error.stack ?? error.message) : String(error),
    connectionUrls,
  );
  // Once a JSON line was written, stderr stays JSON.
  if (serverLogStarted()) writeServerLog("error", "crashed", { error: text });
  else process.stderr.write(`partner-yield: ${text}\n`);
  process.exitCode = EXIT_FAILURE;
});
