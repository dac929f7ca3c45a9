/**
 * The `partner-yield-conformance` command line: `run`, `list`, `properties`. Exit codes: 0 every
 * check passed, 1 a check (or property) failed, 2 bad configuration or an unreachable target.
 * @module
 */
import { accessSync, constants, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { costOf } from "./checks/definition.js";
import { CHECKS } from "./checks/registry.js";
import { LEVELS, sourceOf } from "./checks/types.js";
import {
  ConfigError,
  DEFAULT_PLAN,
  DEFAULTS,
  ENV,
  parseBasePath,
  parseBaseUrl,
  parseIntegerOption,
  parseLevel,
  parseOnly,
  randomSeed,
} from "./config.js";
import { embeddedSettings, sandboxInputs, startEmbeddedTarget } from "./embedded.js";
import { BIN, type Invocation, invocationOf } from "./invocation.js";
import { loadReferenceFixtures } from "./oracle/fixtures.js";
import { propertiesJUnit } from "./properties/api-junit.js";
import { runApiProperties } from "./properties/api-run.js";
import { PROPERTIES } from "./properties/registry.js";
import { runProperties } from "./properties/run.js";
import { Redactor } from "./redact.js";
import { ConsoleReporter, type TextStream } from "./reporters/console.js";
import { toJson } from "./reporters/json.js";
import { toJUnit } from "./reporters/junit.js";
import { type RunReport, type RunSettings, redactorFor, requestBound, runConformance } from "./runner.js";
import { echoInput, escapeUnsafe } from "./terminal.js";
import { defaultBurst } from "./throttle.js";
import { VERSION } from "./version.js";

export interface Io {
  readonly stdout: TextStream;
  readonly stderr: TextStream;
  readonly env: NodeJS.ProcessEnv;
  /** How the CLI was started, for the commands it prints; from the process by default. */
  readonly invocation?: Invocation;
}

const MAIN_HELP = `${BIN} ${VERSION}: does a deployment honour the partner interface?

Usage:
  ${BIN} [run] [options]       run the conformance checks against a target (run is the default)
  ${BIN} list [options]        print every check: ID, kind, level, cost, source, title
  ${BIN} properties [options]  run the yield-math properties (CONTRACT §2) against the core,
                               or with --base-url against a deployment's answers
  ${BIN} sandbox-keys [options]  print our own sandbox's demo credentials (sandbox only) and
                               the full command that certifies a sandbox server on them
  ${BIN} <command> --help      options of a command

Exit codes: 0 passed, 1 a check or property failed, 2 bad configuration or unreachable target.
`;

const RUN_HELP = `Usage: ${BIN} run [--base-url URL] [options]

Runs every check of the level against a target and reports each one (✔ passed, ✖ failed,
⚠ warning: inconclusive or not a failure, ○ skipped). Without --base-url, starts the embedded
sandbox server (fixtures and demo credentials) on 127.0.0.1 and an ephemeral port, and runs
against it. With a signing secret, one signed event (and one signed with a wrong secret) checks
it first: a secret the target refuses is exit 2, like a refused API key.

Target and credentials (secrets from the environment; flags work too, and are redacted in reports):
  --base-url URL            where the API is mounted                          [$${ENV.baseUrl}]
                            a mount path: https://host/yield/v1 (the products at …/yield/v1/products)
                            a server root: https://sandbox.example.com (the API under /api/partner)
  --base-path PATH          the API's own base path under --base-url (core's basePath), when
                            it is not the default: "" under a mount path, /api/partner under a
                            server root; e.g. /v1/partner
  --api-key KEY             the partner's API key                            [$${ENV.apiKey}]
  --signing-secret SECRET   the event signing secret (events checks)         [$${ENV.signingSecret}]
  --other-env-api-key KEY   a key of the other environment (AUTH-03)        [$${ENV.otherEnvApiKey}]
  --foreign-slug SLUG       a product slug of ANOTHER partner (PRD-07)
  --revoked-api-key KEY     a revoked key of the same partner (AUTH-06)       [$${ENV.revokedApiKey}]
  --wallet ADDRESS          a wallet holding a position (POS-06, POS-09)
  --fixtures DIR            the deployment's fixture files (partners, products, vaults, prices
                            .json): POS-09 recomputes every position from them (embedded: its own)
  Checks whose input is absent are reported as skipped (○), never as passed. A credential
  set but empty (PARTNER_SIGNING_SECRET=) is a configuration error (exit 2), never "absent".

What to check:
  --level spec|reference    spec: only what interface.md states (plus "no 5xx");
                            reference: also the CONTRACT decisions (default)
  --only IDS                comma-separated check IDs or prefixes: --only EVT-03,AUTH
  --seed N                  seed of every random choice (amounts, wallets); printed in every report
  --yield-samples N         amounts sent by YLD-02 and YLD-03 (default ${DEFAULTS.yieldSamples})
  --product-sample N        products read one by one, at most (default ${DEFAULTS.productSample})
  --concurrency N           identical events sent at once by EVT-19 (default ${DEFAULTS.concurrentDuplicates})
  --rate-limit-probe        opt-in RL-03: spend the quota until a 429 and check Retry-After
  --probe-budget N          most requests RL-03 may spend (default ${DEFAULTS.probeBudget}; embedded: quota + 1)

Throttling:
  --rpm N                   client-side token bucket, requests a minute (default ${DEFAULTS.rpm}; embedded ${DEFAULTS.embeddedRpm})
  --burst N                 bucket size (default rpm / 10)
  --max-requests N          refuse to start a plan that could send more than N requests
  --timeout MS              per-request timeout (default ${DEFAULTS.timeoutMs}); a target silent for
                            longer is reported as not answering within --timeout

Reports (a path that cannot be written is exit 2 before any request):
  --junit FILE              JUnit XML (one testsuite per category)
  --json FILE               the whole run as JSON (missing directories are created)
  --fail-on-skip            exit 1 when a selected check was skipped (CI without a secret stays red);
                            opt-in checks left out (RL-03 without --rate-limit-probe) do not count

Exit codes: 0 no check failed (warnings and skips allowed), 1 a check failed (or was skipped,
with --fail-on-skip), 2 bad configuration: unreachable target, refused API key or signing secret.
`;

const LIST_HELP = `Usage: ${BIN} list [--level spec|reference] [--json]

Prints every check: ID, kind (scenario: its own requests; response: applied to every response),
level, request cost, source section and title. With --level, only the checks that run at that
level. With --json, machine-readable, with the line of interface.md or the CONTRACT each enforces.
`;

const PROPERTIES_HELP = `Usage: ${BIN} properties [--base-url URL] [--runs N] [--seed N] [--path P] [--only IDS] [--json FILE]

Without --base-url: the fast-check properties of CONTRACT §2 against the core's yield math, in
process. With --base-url: the properties the API can show (P-04, P-06, P-08, P-09, P-10, P-12,
P-14, P-15, P-16, P-17, P-19), against the deployment's answers for generated amounts and the
positions it serves (P-16 and P-19 recompute them from the answer's audit view, data.vault),
within a request budget and a throttle (by default under a sandbox's 100 requests a minute).
Each property prints its run count and its coverage record; a failure prints the counterexample
(shrunk to a small amount while the budget lasts), its seed and path, the replay command, and
(with --base-url) the curl commands that reproduce it. A 5xx, a reset, a timeout or an
unreadable answer to a valid input is a failure. A property that could not run its inputs, or
every class of them, is inconclusive (exit 1 unless --allow-inconclusive), never passed.

  --runs N          runs per property (default 1000; with --base-url ${DEFAULTS.apiPropertyRuns})
  --seed N          seed (default: random, printed)
  --path P          replay path of a counterexample (needs --seed and one property in --only)
  --only IDS        comma-separated property IDs (P-01,P-07) or the prefix P
  --json FILE       the results as JSON

With --base-url (credentials from the environment, as for run):
  --base-url URL    where the API is mounted: https://host/yield/v1, or a server root
                    (https://host, the API under /api/partner)        [$${ENV.baseUrl}]
  --base-path PATH  the API's own base path under it, when not the default ("" under a
                    mount path, /api/partner under a server root); e.g. /v1/partner
  --api-key KEY     the partner's API key                              [$${ENV.apiKey}]
  --wallet ADDRESS  a wallet that holds a position (the position properties read it too)
  --product-sample N  products whose positions are read, every kind first (default ${DEFAULTS.apiPropertyProducts})
  --max-requests N  request budget, shrinking included (default ${DEFAULTS.apiPropertyBudget}); each property
                    gets its runs' share and an equal share of what is left for shrinking
  --min-runs N      inputs each class must get (products by status and decimals, the loss
                    product, amounts zero / one unit / max precision / everyday / huge, wallets
                    with and without holdings), made on purpose first (default 1); a class
                    short of it makes the property inconclusive
  --allow-inconclusive  exit 0 when no property failed, even if one was inconclusive
  --junit FILE      JUnit XML: a testcase per property, its coverage record in system-out
  --rpm N, --burst N  client-side throttle (default ${DEFAULTS.rpm}/min, burst rpm / 10)
  --timeout MS      per-request timeout (default ${DEFAULTS.timeoutMs})
`;

/** Runs the CLI; resolves with the exit code. */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  const [first, ...others] = argv;
  // `run` is the default command: `${BIN} --base-url …` is `${BIN} run --base-url …`.
  const implicitRun = first === undefined || (first.startsWith("-") && !TOP_LEVEL_FLAGS.has(first));
  const command = implicitRun ? "run" : first;
  const rest = implicitRun ? argv : others;
  try {
    switch (command) {
      case "help":
      case "--help":
      case "-h":
        io.stdout.write(MAIN_HELP);
        return 0;
      case "--version":
      case "-v":
        io.stdout.write(`${VERSION}\n`);
        return 0;
      case "run":
        return await runCommand(rest, io);
      case "list":
        return listCommand(rest, io);
      case "properties":
        return await propertiesCommand(rest, io);
      case "sandbox-keys":
        return await sandboxKeysCommand(rest, io);
      default:
        throw new ConfigError(`unknown command ${echoInput(command)}; try \`${BIN} --help\``);
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      // Escaped as written: a message that quotes the command line cannot send the terminal a
      // control sequence (each quoted value is also cut: echoInput).
      io.stderr.write(`${BIN}: ${escapeUnsafe(error.message, { keepNewlines: true })}\n`);
      return 2;
    }
    throw error;
  }
}

const TOP_LEVEL_FLAGS = new Set(["--help", "-h", "--version", "-v"]);

function processIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

function invocation(io: Io): Invocation {
  return io.invocation ?? invocationOf(io.env, process.argv[1], process.cwd());
}

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/** parseArgs with its errors turned into usage errors (exit 2). */
function parse<const O extends OptionsConfig>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false });
  } catch (error) {
    const ambiguous = /^Option '(--[a-z-]+)[^']*' argument is ambiguous/.exec((error as Error).message);
    if (ambiguous !== null) {
      const flag = ambiguous[1]!;
      const value = args[args.indexOf(flag) + 1] ?? "-1";
      throw new ConfigError(
        `${flag} takes a value that starts with "-" only as ${flag}=${value} (got ${flag} ${value}); see --help`,
      );
    }
    const message = (error as Error).message.replace(/\. To specify a positional.*$/s, "");
    const unknown = /^Unknown option '([\s\S]*)'$/.exec(message);
    throw new ConfigError(
      `${unknown === null ? message : `Unknown option ${echoInput(unknown[1]!)}`}; see --help`,
    );
  }
}

const RUN_OPTIONS = {
  help: { type: "boolean", short: "h" },
  "base-url": { type: "string" },
  "base-path": { type: "string" },
  "api-key": { type: "string" },
  "signing-secret": { type: "string" },
  "other-env-api-key": { type: "string" },
  "foreign-slug": { type: "string" },
  "revoked-api-key": { type: "string" },
  wallet: { type: "string" },
  fixtures: { type: "string" },
  "fail-on-skip": { type: "boolean" },
  level: { type: "string" },
  only: { type: "string" },
  seed: { type: "string" },
  "yield-samples": { type: "string" },
  "product-sample": { type: "string" },
  concurrency: { type: "string" },
  "rate-limit-probe": { type: "boolean" },
  "probe-budget": { type: "string" },
  rpm: { type: "string" },
  burst: { type: "string" },
  "max-requests": { type: "string" },
  timeout: { type: "string" },
  junit: { type: "string" },
  json: { type: "string" },
} as const;

async function runCommand(args: readonly string[], io: Io): Promise<number> {
  const { values: v } = parse(args, RUN_OPTIONS);
  if (v.help) {
    io.stdout.write(RUN_HELP);
    return 0;
  }
  const int = (name: keyof typeof v, min: number, max?: number): number | undefined => {
    const raw = v[name];
    return typeof raw === "string" ? parseIntegerOption(name, raw, min, max) : undefined;
  };
  const baseUrlText = v["base-url"] ?? nonEmpty(io.env[ENV.baseUrl]);
  const baseUrl = baseUrlText === undefined ? undefined : parseBaseUrl(baseUrlText);
  const apiBasePath = v["base-path"] === undefined ? undefined : parseBasePath(v["base-path"]);
  const level = v.level === undefined ? DEFAULTS.level : parseLevel(v.level);
  const only = v.only === undefined ? undefined : parseOnly(v.only);
  const seed = int("seed", 0, 0x7fffffff) ?? randomSeed();
  const rpmFlag = int("rpm", 1, 100_000);
  const burstFlag = int("burst", 1, 100_000);
  const maxRequests = int("max-requests", 1);
  const yieldSamples = int("yield-samples", 2, 1000) ?? DEFAULTS.yieldSamples;
  const productSample = int("product-sample", 1, 1000) ?? DEFAULTS.productSample;
  const concurrency = int("concurrency", 2, 100) ?? DEFAULTS.concurrentDuplicates;
  const probeBudgetFlag = int("probe-budget", 2, 100_000);
  const timeoutMs = int("timeout", 100, 600_000) ?? DEFAULTS.timeoutMs;
  const wallet = v.wallet;
  if (wallet !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(wallet)) {
    throw new ConfigError(`--wallet must be 0x followed by 40 hex digits, got ${echoInput(wallet)}`);
  }

  let embedded: Awaited<ReturnType<typeof startEmbeddedTarget>> | undefined;
  let settings: RunSettings;
  const plan = (probeBudget: number) => ({
    yieldSamples,
    productSample,
    concurrentDuplicates: concurrency,
    probeBudget,
  });
  const fixtures = v.fixtures === undefined ? undefined : loadReferenceFixtures(v.fixtures);
  const reports = prepareReports(v.junit, v.json);
  const rerun = rerunInputs(v, baseUrl);
  if (baseUrl === undefined) {
    for (const flag of [
      "api-key",
      "signing-secret",
      "other-env-api-key",
      "revoked-api-key",
      "base-path",
    ] as const) {
      if (v[flag] !== undefined)
        throw new ConfigError(`--${flag} needs --base-url (the embedded server uses the demo credentials)`);
    }
    embedded = await startEmbeddedTarget();
    const rpm = rpmFlag ?? DEFAULTS.embeddedRpm;
    settings = embeddedSettings(embedded, {
      foreignSlug: v["foreign-slug"] ?? embedded.foreignSlug,
      wallet: wallet ?? embedded.wallet,
      fixtures: fixtures ?? embedded.fixtures,
      revokedApiKey: embedded.revokedApiKey,
      apiKeySource: "the embedded server's demo key",
      failOnSkip: v["fail-on-skip"] === true,
      level,
      seed,
      rpm,
      burst: burstFlag ?? defaultBurst(rpm),
      maxRequests,
      only,
      rateLimitProbe: v["rate-limit-probe"] === true,
      plan: plan(probeBudgetFlag ?? embedded.quota + 1),
      timeoutMs,
    });
  } else {
    const apiKey = credential(v["api-key"], "--api-key", io.env, "apiKey");
    const apiKeySource = v["api-key"] !== undefined ? "the key passed with --api-key" : ENV.apiKey;
    if (apiKey === undefined) {
      throw new ConfigError(`no API key: set ${ENV.apiKey} (or pass --api-key) for ${baseUrl}`);
    }
    const rpm = rpmFlag ?? DEFAULTS.rpm;
    settings = {
      baseUrl,
      ...(apiBasePath === undefined ? {} : { apiBasePath }),
      embedded: false,
      apiKey,
      signingSecret: credential(v["signing-secret"], "--signing-secret", io.env, "signingSecret"),
      otherEnvApiKey: credential(v["other-env-api-key"], "--other-env-api-key", io.env, "otherEnvApiKey"),
      revokedApiKey: credential(v["revoked-api-key"], "--revoked-api-key", io.env, "revokedApiKey"),
      foreignSlug: v["foreign-slug"],
      wallet,
      fixtures,
      apiKeySource,
      signingSecretSource:
        v["signing-secret"] !== undefined ? "the secret passed with --signing-secret" : ENV.signingSecret,
      failOnSkip: v["fail-on-skip"] === true,
      level,
      seed,
      rpm,
      burst: burstFlag ?? defaultBurst(rpm),
      maxRequests,
      only,
      rateLimitProbe: v["rate-limit-probe"] === true,
      plan: plan(probeBudgetFlag ?? DEFAULTS.probeBudget),
      timeoutMs,
    };
  }

  try {
    const redactor = redactorFor(settings);
    const reporter = new ConsoleReporter(io.stdout, io.stderr, redactor);
    const report = await runConformance(settings, {
      onPlan: (p, s) => reporter.plan(p, s, VERSION),
      onCheckStart: (check, i, total) => reporter.checkStarted(check, i, total),
      onResult: (result) => reporter.result(result),
      onSend: (spent) => reporter.requestSent(spent),
      onBackoff: (ms) => reporter.backoff(ms),
      onPause: (ms, why) => reporter.pause(ms, why),
    });
    reporter.summary(report, rerunCommand(report, settings, invocation(io), rerun));
    const skips = countedSkips(report);
    if (settings.failOnSkip && skips > 0 && report.summary.failed === 0)
      io.stdout.write(`--fail-on-skip: ${skips} check(s) skipped, exit 1\n`);
    return writeReports(report, reports, redactor, io);
  } finally {
    await embedded?.close();
  }
}

/** The report files of a run. */
export interface ReportFiles {
  readonly junit: string | undefined;
  readonly json: string | undefined;
}

/**
 * Before any request: creates the reports' directories and checks they can be written, so a typo
 * costs nothing (exit 2) instead of a whole run.
 */
export function prepareReports(junit: string | undefined, json: string | undefined): ReportFiles {
  for (const [flag, file] of [
    ["--junit", junit],
    ["--json", json],
  ] as const) {
    if (file === undefined) continue;
    if (file === "") throw new ConfigError(`${flag} needs a file name`);
    try {
      makeDirectories(dirname(resolve(file)));
      if (existsSync(file)) {
        if (statSync(file).isDirectory()) throw new Error("it is a directory");
        accessSync(file, constants.W_OK);
      } else accessSync(dirname(resolve(file)), constants.W_OK);
    } catch (error) {
      throw new ConfigError(`${flag} ${file} cannot be written: ${(error as Error).message}`);
    }
  }
  return { junit, json };
}

/**
 * mkdir -p without `mkdirSync(…, { recursive: true })`, which spins forever under /proc: the
 * missing directories are made one by one below the nearest one that exists.
 */
function makeDirectories(dir: string): void {
  const missing: string[] = [];
  let at = dir;
  while (!existsSync(at)) {
    missing.unshift(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  if (existsSync(at) && !statSync(at).isDirectory()) throw new Error(`${at} is not a directory`);
  for (const each of missing) mkdirSync(each);
}

/**
 * Writes both reports, each whatever happens to the other. Returns the exit code: the run's,
 * or 2 when a report could not be written and no check failed (a failed run stays 1).
 */
export function writeReports(
  report: RunReport,
  files: ReportFiles,
  redactor: ReturnType<typeof redactorFor>,
  io: Io,
): number {
  const outputs: Array<[string | undefined, () => string, string]> = [
    [files.junit, () => toJUnit(report, redactor), "JUnit"],
    [files.json, () => toJson(report, redactor), "JSON"],
  ];
  let failed = false;
  for (const [file, render, kind] of outputs) {
    if (file === undefined) continue;
    try {
      writeFileSync(file, render());
      io.stdout.write(`${kind} report written to ${file}\n`);
    } catch (error) {
      failed = true;
      io.stderr.write(`${BIN}: cannot write the ${kind} report to ${file}: ${(error as Error).message}\n`);
    }
  }
  return report.exitCode === 1 ? 1 : failed ? 2 : 0;
}

/** What a rerun must repeat: the run's input flags, and the secrets' environment variables. */
export interface RerunInputs {
  /** Flags and values, in order, each value shell-quoted where needed. */
  readonly flags: readonly string[];
  /** Environment variables the rerun needs, as set for this run (secrets never go on the line). */
  readonly env: readonly string[];
  /** Secrets this run took as flags: the rerun reads them from these variables instead. */
  readonly movedToEnv: readonly string[];
}

/** Flags a rerun does not repeat: the selection and seed it sets itself, the report files, help. */
const NOT_REPEATED = new Set(["help", "only", "seed", "junit", "json", "base-url"]);

/** Secret flags and the environment variable a rerun reads each from. */
const SECRET_FLAGS: Readonly<Record<string, keyof typeof ENV>> = {
  "api-key": "apiKey",
  "signing-secret": "signingSecret",
  "other-env-api-key": "otherEnvApiKey",
  "revoked-api-key": "revokedApiKey",
};

/** The rerun's inputs from a run's parsed flags (every input flag, in the order of RUN_OPTIONS). */
function rerunInputs(
  v: Partial<Record<keyof typeof RUN_OPTIONS, string | boolean | undefined>>,
  baseUrl: string | undefined,
): RerunInputs {
  const flags: string[] = baseUrl === undefined ? [] : ["--base-url", shellWord(baseUrl)];
  const env: string[] = [];
  const movedToEnv: string[] = [];
  for (const name of Object.keys(RUN_OPTIONS) as Array<keyof typeof RUN_OPTIONS>) {
    const value = v[name];
    if (value === undefined || value === false || NOT_REPEATED.has(name)) continue;
    const secret = SECRET_FLAGS[name];
    if (secret !== undefined) {
      movedToEnv.push(`--${name} → ${ENV[secret]}`);
      continue;
    }
    if (value === true) flags.push(`--${name}`);
    else
      flags.push(
        value.startsWith("-") ? `--${name}=${shellWord(value)}` : `--${name}`,
        ...(value.startsWith("-") ? [] : [shellWord(value)]),
      );
  }
  if (baseUrl !== undefined)
    for (const [flag, secret] of Object.entries(SECRET_FLAGS))
      if (v[flag as keyof typeof RUN_OPTIONS] === undefined) env.push(ENV[secret]);
  return { flags, env, movedToEnv };
}

/** A word the shell reads back as itself. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The command that replays the failed (and warned) checks with the same seed and every input
 * flag of the run, as the user started the CLI; a second line names the environment variables
 * it reads the secrets from (never printed). Without `inputs`, the inputs are read off `settings`.
 */
export function rerunCommand(
  report: RunReport,
  settings: RunSettings,
  how: Invocation,
  inputs?: RerunInputs,
): string | undefined {
  const failed = report.results
    .filter((r) => r.status === "failed" || r.status === "warning")
    .map((r) => r.id);
  if (failed.length === 0) return undefined;
  const given = inputs ?? inputsOf(settings);
  const parts = [
    how.conformance,
    "run",
    "--seed",
    String(report.seed),
    "--only",
    failed.join(","),
    ...given.flags,
  ];
  const env = given.env.filter((name) => name === ENV.apiKey || secretSet(settings, name));
  const moved = given.movedToEnv;
  const lines = [parts.join(" ")];
  if (env.length > 0 || moved.length > 0)
    lines.push(
      `  with ${[...env, ...moved.map((m) => m.split(" → ")[1]!)].join(", ")} set in the environment as for this run` +
        (moved.length > 0
          ? ` (this run took ${moved.map((m) => m.split(" → ")[0]).join(", ")} on the command line)`
          : ""),
    );
  return lines.join("\n");
}

function secretSet(settings: RunSettings, name: string): boolean {
  if (name === ENV.signingSecret) return settings.signingSecret !== undefined;
  if (name === ENV.otherEnvApiKey) return settings.otherEnvApiKey !== undefined;
  if (name === ENV.revokedApiKey) return settings.revokedApiKey !== undefined;
  return true;
}

/** A rerun's inputs read off resolved settings (the docs' sample runs). */
function inputsOf(settings: RunSettings): RerunInputs {
  const flags: string[] = [];
  if (!settings.embedded) {
    flags.push("--base-url", shellWord(settings.baseUrl));
    if (settings.apiBasePath !== undefined) flags.push("--base-path", shellWord(settings.apiBasePath));
    if (settings.foreignSlug !== undefined) flags.push("--foreign-slug", shellWord(settings.foreignSlug));
    if (settings.wallet !== undefined) flags.push("--wallet", settings.wallet);
  }
  if (settings.level !== "reference") flags.push("--level", settings.level);
  if (settings.rateLimitProbe) flags.push("--rate-limit-probe");
  return {
    flags,
    env: settings.embedded ? [] : Object.values(SECRET_FLAGS).map((k) => ENV[k]),
    movedToEnv: [],
  };
}

/** Skips that count for `--fail-on-skip`: not the opt-in checks the run did not opt into. */
export function countedSkips(report: RunReport): number {
  return report.results.filter((r) => r.status === "skipped" && !r.optIn).length;
}

const SANDBOX_KEYS_HELP = `Usage: ${BIN} sandbox-keys [--base-url URL] [--fixtures DIR]

Prints the sandbox demo credentials of partner-yield's own fixtures (the partner's sandbox key and
signing secret, the same partner's production key and a revoked key, which a sandbox server
refuses) as shell exports, and the full run command that certifies a sandbox server started on
those fixtures (\`partner-yield serve\`): every optional input given (wallet, fixtures, foreign slug),
so no check is skipped but the opt-in quota probe. These are published DEMO credentials that
unlock only the sandbox fixtures: a production server refuses every one of them.

  --base-url URL    the sandbox server to certify (default http://127.0.0.1:8787, serve's default)
  --fixtures DIR    the fixtures it serves (default the repository's fixtures/)
`;

async function sandboxKeysCommand(args: readonly string[], io: Io): Promise<number> {
  const { values: v } = parse(args, {
    help: { type: "boolean", short: "h" },
    "base-url": { type: "string" },
    fixtures: { type: "string" },
  } as const);
  if (v.help) {
    io.stdout.write(SANDBOX_KEYS_HELP);
    return 0;
  }
  const baseUrl = parseBaseUrl(v["base-url"] ?? "http://127.0.0.1:8787");
  const sandbox = await sandboxInputs(v.fixtures);
  const c = sandbox.credentials;
  const lines = [
    "# partner-yield sandbox DEMO credentials: published, sandbox only; a production server refuses them all.",
    `export ${ENV.apiKey}=${c.sandboxApiKey}`,
    `export ${ENV.signingSecret}=${c.signingSecret}`,
    `# the same partner's production key: a sandbox server answers it 401 wrong_environment (AUTH-03)`,
    `export ${ENV.otherEnvApiKey}=${c.productionApiKey}`,
    ...(c.revokedSandboxApiKey === undefined
      ? []
      : [
          "# a revoked sandbox key of the same partner: 401 invalid_api_key (AUTH-06)",
          `export ${ENV.revokedApiKey}=${c.revokedSandboxApiKey}`,
        ]),
    "# certify the sandbox server (every optional input given; add --rate-limit-probe to spend its quota too):",
    [
      invocation(io).conformance,
      "run",
      "--base-url",
      shellWord(baseUrl),
      "--wallet",
      c.walletWithPositions,
      "--fixtures",
      shellWord(shownPath(sandbox.fixturesDir)),
      ...(sandbox.foreignSlug === undefined ? [] : ["--foreign-slug", shellWord(sandbox.foreignSlug)]),
      "--fail-on-skip",
      "--junit",
      "conformance.xml",
    ].join(" "),
  ];
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** A path relative to the working directory when it is under it (a command to paste stays short). */
function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}

function listCommand(args: readonly string[], io: Io): number {
  const { values: v } = parse(args, {
    help: { type: "boolean", short: "h" },
    level: { type: "string" },
    json: { type: "boolean" },
  } as const);
  if (v.help) {
    io.stdout.write(LIST_HELP);
    return 0;
  }
  const level = v.level === undefined ? undefined : parseLevel(v.level);
  const checks = CHECKS.filter((c) => level === undefined || level === "reference" || c.level === "spec");
  const defaults = DEFAULT_PLAN;
  if (v.json) {
    const rows = checks.map((c) => ({
      id: c.id,
      title: c.title,
      category: c.category,
      kind: c.kind,
      level: c.level,
      cost: costOf(c, defaults),
      source: sourceOf(c.cites),
      enforces: c.cites,
      tolerates: c.tolerates ?? [],
      reference: c.reference ?? null,
      failure: c.failure,
      needs: c.needs ?? [],
    }));
    io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  // Every column as wide as its widest cell, so no row (RL-03's cost of 101, say) shifts the next.
  const sources = new Map(checks.map((c) => [c.id, sourceOf(c.cites)]));
  const width = Math.max(...[...sources.values()].map((s) => s.length)) + 2;
  const idWidth = Math.max(...checks.map((c) => c.id.length)) + 1;
  const costWidth = Math.max(4, ...checks.map((c) => String(costOf(c, defaults)).length));
  io.stdout.write(
    `${"ID".padEnd(idWidth)}${"kind".padEnd(10)}${"level".padEnd(11)}${"cost".padStart(costWidth)}  ${"source".padEnd(width)}title\n`,
  );
  for (const c of checks) {
    const cost = String(costOf(c, defaults)).padStart(costWidth);
    io.stdout.write(
      `${c.id.padEnd(idWidth)}${c.kind.padEnd(10)}${c.level.padEnd(11)}${cost}  ${sources.get(c.id)!.padEnd(width)}${c.title}\n`,
    );
  }
  const bound = requestBound(checks, defaults);
  io.stdout.write(
    `\n${checks.length} checks${level ? ` at level ${level}` : ` (${LEVELS.join(", ")})`}; ` +
      `a full run sends at most ${bound.run} requests with the defaults, discovery and the signing preflight included` +
      `${bound.probe > 0 ? `, plus up to ${bound.probe} with --rate-limit-probe` : ""}\n`,
  );
  return 0;
}

async function propertiesCommand(args: readonly string[], io: Io): Promise<number> {
  const { values: v } = parse(args, {
    help: { type: "boolean", short: "h" },
    runs: { type: "string" },
    seed: { type: "string" },
    path: { type: "string" },
    only: { type: "string" },
    json: { type: "string" },
    "base-url": { type: "string" },
    "base-path": { type: "string" },
    "api-key": { type: "string" },
    wallet: { type: "string" },
    "product-sample": { type: "string" },
    "max-requests": { type: "string" },
    rpm: { type: "string" },
    burst: { type: "string" },
    timeout: { type: "string" },
    "min-runs": { type: "string" },
    "allow-inconclusive": { type: "boolean" },
    junit: { type: "string" },
  } as const);
  if (v.help) {
    io.stdout.write(PROPERTIES_HELP);
    return 0;
  }
  const baseUrlText = v["base-url"] ?? nonEmpty(io.env[ENV.baseUrl]);
  const baseUrl = baseUrlText === undefined ? undefined : parseBaseUrl(baseUrlText);
  if (baseUrl === undefined) {
    for (const flag of [
      "api-key",
      "base-path",
      "wallet",
      "product-sample",
      "max-requests",
      "rpm",
      "burst",
      "timeout",
      "min-runs",
      "allow-inconclusive",
      "junit",
    ] as const)
      if (v[flag] !== undefined)
        throw new ConfigError(`--${flag} needs --base-url (the in-process run sends no request)`);
  }
  const runs =
    v.runs === undefined
      ? baseUrl === undefined
        ? 1000
        : DEFAULTS.apiPropertyRuns
      : parseIntegerOption("runs", v.runs, 1, 10_000_000);
  const seed =
    v.seed === undefined ? randomSeed() : parseIntegerOption("seed", v.seed, -0x80000000, 0x7fffffff);
  const only = v.only === undefined ? undefined : parseOnly(v.only);
  if (v.path !== undefined) {
    if (v.seed === undefined) throw new ConfigError("--path replays a counterexample only with its --seed");
    if (only === undefined || only.length !== 1 || only[0] === "P")
      throw new ConfigError("--path belongs to one property: pass it with --only P-xx");
    if (!/^[0-9]+(:[0-9]+)*$/.test(v.path))
      throw new ConfigError(`--path looks like 3:1:0, got ${echoInput(v.path)}`);
  }
  const files = v.json === undefined && v.junit === undefined ? undefined : prepareReports(v.junit, v.json);
  const json = files?.json;
  const print = (line: string) => io.stdout.write(`${line}\n`);
  let report: { failed: number; inconclusive?: number };
  if (baseUrl !== undefined) {
    const apiKey = credential(v["api-key"], "--api-key", io.env, "apiKey");
    if (apiKey === undefined)
      throw new ConfigError(`no API key: set ${ENV.apiKey} (or pass --api-key) for ${baseUrl}`);
    const wallet = v.wallet;
    if (wallet !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(wallet))
      throw new ConfigError(`--wallet must be 0x followed by 40 hex digits, got ${echoInput(wallet)}`);
    const rpm = v.rpm === undefined ? DEFAULTS.rpm : parseIntegerOption("rpm", v.rpm, 1, 100_000);
    const apiBasePath = v["base-path"] === undefined ? undefined : parseBasePath(v["base-path"]);
    const settings = {
      baseUrl,
      apiKey,
      apiKeySource: v["api-key"] !== undefined ? "the key passed with --api-key" : ENV.apiKey,
      runs,
      seed,
      path: v.path,
      only,
      wallet,
      productSample:
        v["product-sample"] === undefined
          ? DEFAULTS.apiPropertyProducts
          : parseIntegerOption("product-sample", v["product-sample"], 1, 1000),
      maxRequests:
        v["max-requests"] === undefined
          ? DEFAULTS.apiPropertyBudget
          : parseIntegerOption("max-requests", v["max-requests"], 1),
      rpm,
      burst: v.burst === undefined ? defaultBurst(rpm) : parseIntegerOption("burst", v.burst, 1, 100_000),
      timeoutMs:
        v.timeout === undefined ? DEFAULTS.timeoutMs : parseIntegerOption("timeout", v.timeout, 100, 600_000),
      // The replay line repeats --base-path: without it the replay would ask the default base path.
      command:
        apiBasePath === undefined
          ? invocation(io).properties
          : `${invocation(io).properties} --base-path ${shellWord(apiBasePath)}`,
      ...(apiBasePath === undefined ? {} : { apiBasePath }),
      redactor: new Redactor([{ value: apiKey, placeholder: "$PARTNER_API_KEY" }]),
      minRuns:
        v["min-runs"] === undefined ? undefined : parseIntegerOption("min-runs", v["min-runs"], 1, 100),
    };
    const apiReport = await runApiProperties(settings, print);
    if (files?.junit !== undefined) {
      try {
        writeFileSync(files.junit, propertiesJUnit(apiReport, settings.redactor));
      } catch (error) {
        throw new ConfigError(`cannot write ${files.junit}: ${(error as Error).message}`);
      }
    }
    report = apiReport;
  } else {
    const selected = PROPERTIES.filter(
      (p) => only === undefined || only.some((o) => o === p.id || o === "P"),
    );
    if (only !== undefined) {
      const unknown = only.filter((o) => o !== "P" && !PROPERTIES.some((p) => p.id === o));
      if (unknown.length > 0)
        throw new ConfigError(
          `--only: no property ${unknown.join(", ")} (IDs are P-01 … P-${String(PROPERTIES.length).padStart(2, "0")})`,
        );
    }
    report = runProperties(selected, { runs, seed, path: v.path, command: invocation(io).properties }, print);
  }
  if (json !== undefined) {
    try {
      writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
    } catch (error) {
      throw new ConfigError(`cannot write ${json}: ${(error as Error).message}`);
    }
  }
  if (report.failed > 0) return 1;
  return (report.inconclusive ?? 0) > 0 && !v["allow-inconclusive"] ? 1 : 0;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * A credential from its flag or its environment variable; undefined when neither is given. Set
 * but empty (`PARTNER_SIGNING_SECRET=`, `--api-key ""`) is a configuration error: a CI job whose
 * secret did not expand must not skip the checks that need it and go green.
 */
function credential(
  flag: string | undefined,
  flagName: string,
  env: NodeJS.ProcessEnv,
  key: keyof typeof ENV,
): string | undefined {
  const name = ENV[key];
  if (flag !== undefined) {
    if (flag.trim() === "")
      throw new ConfigError(`${flagName} is empty: give the value, or leave the flag out`);
    return flag;
  }
  const value = env[name];
  if (value === undefined) return undefined;
  if (value.trim() === "")
    throw new ConfigError(
      `${name} is set but empty: give it the value (did the CI secret expand?), or unset it to run without it`,
    );
  return value;
}
