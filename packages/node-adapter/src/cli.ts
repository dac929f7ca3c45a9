/**
 * `partner-yield serve`: the server a user starts. Flags and variables in `cli-options.ts`;
 * exit status 0 after a clean shutdown, 1 when the server cannot start, 2 for a bad command line
 * or fixture. Lifecycle messages go to stderr; stdout holds the banner and the request log.
 * @module
 */
import { FixtureError } from "@partner-yield/core";
import { formatBanner } from "./banner.js";
import { helpText, parseCommandLine, type ServeConfig, UsageError } from "./cli-options.js";
import { loadFixtureDir } from "./fixture-dir.js";
import { createNodePartnerApi, startServer } from "./server.js";

// A reader that stops early (`partner-yield --help | head`, a log pipe that died) is not an
// error: what it did not read is dropped, and a running server keeps serving.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

async function main(argv: readonly string[]): Promise<void> {
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
  let data: ReturnType<typeof loadFixtureDir>;
  try {
    data = loadFixtureDir(config.fixturesDir);
  } catch (error) {
    if (!(error instanceof FixtureError)) throw error;
    fail(EXIT_USAGE, `invalid fixtures: ${error.message}`);
    return;
  }
  // Only with --rpc-url / --price-table: a fixtures-only server never loads viem.
  const chain =
    config.chain === undefined
      ? undefined
      : await (await import("./chain-sources.js")).createChainSources(config.chain, data, (line) =>
          process.stderr.write(`partner-yield: ${line}\n`),
        );
  const api = createNodePartnerApi({
    environment: config.environment,
    data,
    products: chain?.products,
    positions: chain?.positions,
    prices: chain?.prices,
    bodyLimitBytes: config.bodyLimitBytes,
    rateLimitQuota: config.rateLimitQuota,
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
      log: config.log,
    });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const why = e.code === "EADDRINUSE" ? "the address is already in use" : e.message;
    fail(EXIT_FAILURE, `cannot listen on ${config.host}:${config.port}: ${why}`);
    return;
  }
  process.stdout.write(
    await formatBanner({
      url: server.url,
      environment: config.environment,
      fixturesDir: config.fixturesDir,
      data,
      bodyLimitBytes: config.bodyLimitBytes,
      rateLimitQuota: config.rateLimitQuota,
      sources: chain?.summary,
    }),
  );

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`partner-yield: ${signal} again, exiting without waiting\n`);
      process.exit(EXIT_FAILURE);
    }
    stopping = true;
    process.stderr.write(
      `partner-yield: ${signal}: shutting down (${server.listener.inFlight} requests in flight, ` +
        `waiting up to ${config.timeouts.shutdownTimeoutMs} ms)\n`,
    );
    server.close().then(
      () => {
        process.stderr.write("partner-yield: stopped\n");
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
      },
      (error: unknown) => {
        process.stderr.write(`partner-yield: shutdown failed: ${String(error)}\n`);
        process.exit(EXIT_FAILURE);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

function fail(code: number, message: string): void {
  process.stderr.write(`partner-yield: ${message}\n`);
  process.exitCode = code;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(
    `partner-yield: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = EXIT_FAILURE;
});
