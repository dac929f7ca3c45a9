/**
 * `partner-yield db migrate | import-fixtures DIR | status`: the PostgreSQL schema and data of a
 * deployment. The store package is imported only here, when a `db` command runs.
 * @module
 */
import { parseArgs } from "node:util";
import { accept, FixtureError, type Result, refuse } from "@partner-yield/core";
import { echoInput, escapeUnsafe } from "@partner-yield/core/adapters";
import { loadFixtureDir } from "@partner-yield/node-adapter";
import { argsErrorMessage } from "./args-error.js";
import { auditActor } from "./audit-command.js";
import { databaseFailure, EXIT_OK, EXIT_SCHEMA, EXIT_USAGE, failureReporter } from "./command-exit.js";
import { publishedCredentialsMessage, publishedInFixtures } from "./published-credentials.js";
import { redactUrl } from "./redact-url.js";

/** The text of `partner-yield db --help`. */
export function dbHelpText(): string {
  return [
    "partner-yield db: the PostgreSQL schema and data of partner-yield",
    "",
    "Usage:",
    "  partner-yield db migrate [--database-url URL]               apply the pending schema migrations",
    "  partner-yield db import-fixtures DIR [--env ENV] [--overwrite] [--database-url URL]",
    "                                                               load DIR's partners.json, products.json,",
    "                                                               vaults.json and prices.json: insert what",
    "                                                               the database lacks",
    "  partner-yield db status [--database-url URL]                schema version, the releases that run on",
    "                                                               it, and rows per table",
    "  partner-yield db rekey-secrets [--database-url URL]         encrypt every signing secret under the",
    "                                                               first key of PARTNER_YIELD_SECRET_KEYS",
    "  partner-yield db --help                                     this text",
    "",
    "Options:",
    "  --database-url URL   DATABASE_URL        postgres://user:password@host:port/database (required)",
    "  --env ENV            PARTNER_YIELD_ENV   import-fixtures: the environment the data will serve,",
    "                                           sandbox (default) | production",
    "  --overwrite                              import-fixtures: write the files over rows that differ",
    "                                           from them (default: keep every row as the database has it)",
    "  --actor NAME         PARTNER_YIELD_ACTOR import-fixtures, rekey-secrets: who the admin audit records",
    "                                           (default the OS user@host; `partner-yield audit list`)",
    "",
    "migrate is safe to run from several processes at once and again (it then applies nothing); a",
    "server refuses to start until the schema holds all its migrations. A release also runs on a newer",
    "schema whose further migrations are additive (their compatible_from marker is at or below its",
    "schema-code version, its highest migration): roll out with migrate, then the new instances; roll",
    "back by starting the previous release again. status names the releases a schema runs.",
    "import-fixtures validates the files first",
    "(nothing is written when one is invalid), then writes them in one transaction. It inserts the rows",
    "the database lacks and changes no row that is there: a row an operator changed (a product paused",
    "by SQL, a partner's limit) stays as it is and is listed as kept; --overwrite writes the files over",
    "such rows instead, and lists them as overwritten. Importing twice changes nothing; rows the files do",
    "not name are kept; a key the files revoke is revoked; a key or signing secret revoked in the",
    "database is never re-activated. With --env production",
    "it refuses (exit 2, nothing written) files holding a credential published with partner-yield (the",
    "demo keys and signing secrets of the README and fixtures/): `serve --env production` would refuse them.",
    "",
    "Signing secrets at rest: with PARTNER_YIELD_SECRET_KEYS (ID:BASE64 32-byte keys, comma-separated;",
    "or PARTNER_YIELD_SECRET_KEY, one key) import-fixtures and `secrets create` store them encrypted",
    "(AES-256-GCM) under the first key; every listed key decrypts. rekey-secrets encrypts the rows",
    "still in plain text and those under an older key, in one transaction. Rotation: put the new key",
    "first, restart the servers, run rekey-secrets, then drop the old key (docs/data.md).",
    "",
    "Exit status: 0 done (status: this partner-yield runs on the schema); 1 the database cannot be",
    "reached or a statement failed; 2 a bad command line or fixture file; 3 the schema is not one this",
    "partner-yield runs on (status, import-fixtures: run `partner-yield db migrate`; or the database",
    "holds a newer migration that is not additive: upgrade partner-yield).",
    "",
  ].join("\n");
}

/**
 * Runs a `db` command (argv after `db`); returns the exit status. Output on stdout, errors on stderr.
 * @example process.exitCode = await runDbCommand(["status"], process.env);
 */
export async function runDbCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  let parsed: ReturnType<typeof parseDbFlags>;
  try {
    parsed = parseDbFlags(argv);
  } catch (error) {
    return usage(argsErrorMessage(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(dbHelpText());
    return EXIT_OK;
  }
  const [command, ...rest] = positionals;
  if (command === undefined)
    return usage("missing command: migrate, import-fixtures DIR, status or rekey-secrets");
  if (!["migrate", "import-fixtures", "status", "rekey-secrets"].includes(command))
    return usage(
      `unknown command ${echoInput(command)}: migrate, import-fixtures DIR, status or rekey-secrets`,
    );
  const expected = command === "import-fixtures" ? 1 : 0;
  if (rest.length < expected) return usage("import-fixtures needs the fixtures directory, e.g. fixtures/");
  if (rest.length > expected) return usage(`unexpected argument ${echoInput(rest[expected]!)}`);
  const database = databaseUrlOf(values["database-url"], env);
  if (!database.ok) return usage(database.reason);
  if (values.env !== undefined && command !== "import-fixtures")
    return usage("--env applies to import-fixtures only");
  if (values.overwrite === true && command !== "import-fixtures")
    return usage("--overwrite applies to import-fixtures only");
  const environment = values.env ?? (env["PARTNER_YIELD_ENV"] || "sandbox");
  if (environment !== "sandbox" && environment !== "production")
    return usage(
      `${values.env === undefined ? "PARTNER_YIELD_ENV" : "--env"} must be sandbox or production, not ${echoInput(environment)}`,
    );
  const url = database.value;
  connectionUrls = [url];

  // Validate the files before connecting: a bad file changes nothing and says where it is wrong.
  let data: ReturnType<typeof loadFixtureDir> | undefined;
  if (command === "import-fixtures") {
    try {
      data = loadFixtureDir(rest[0]!);
    } catch (error) {
      if (!(error instanceof FixtureError)) throw error;
      return fail(EXIT_USAGE, `invalid fixtures: ${error.message}`);
    }
    const published = environment === "production" ? publishedInFixtures(data) : [];
    if (published.length > 0)
      return fail(EXIT_USAGE, publishedCredentialsMessage(published, "import", rest[0]!).trimEnd());
  }

  const postgres = await import("@partner-yield/store-postgres");
  let secretKeys: InstanceType<typeof postgres.SecretKeyring> | undefined;
  try {
    secretKeys = postgres.SecretKeyring.fromEnv(env);
  } catch (error) {
    return fail(EXIT_USAGE, (error as Error).message);
  }
  if (command === "rekey-secrets" && secretKeys === undefined)
    return usage(
      "rekey-secrets needs the key to encrypt with: set PARTNER_YIELD_SECRET_KEYS (ID:BASE64, the new key first)",
    );
  const pool = postgres.createPool({ connectionString: url, max: 2, statementTimeoutMs: 60_000 });
  const where = redactUrl(url);
  try {
    if (command === "migrate") {
      const before = await postgres.schemaStatus(pool);
      process.stdout.write(
        before.pending.length > 0
          ? `${where}: schema version ${before.current}; applying ${before.pending.length} migration(s)\n`
          : before.newer.length > 0
            ? `${where}: schema version ${before.current} is newer than this partner-yield's (${before.latest}), which runs on it (${before.newer.map((m) => `${m.version} ${escapeUnsafe(m.name)}`).join(", ")}: additive); nothing to apply\n`
            : `${where}: schema version ${before.current} is current; nothing to apply\n`,
      );
      const applied = await postgres.migrate(pool);
      for (const m of applied)
        process.stdout.write(`  applied ${String(m.version).padStart(4, "0")}_${m.name}\n`);
      if (applied.length > 0)
        process.stdout.write(`schema version ${applied[applied.length - 1]!.version}\n`);
      return EXIT_OK;
    }
    const status = await postgres.schemaStatus(pool);
    if (status.pending.length > 0) {
      const message = `${where}: schema version ${status.current}, this partner-yield needs ${status.latest}: run \`partner-yield db migrate\` first`;
      if (command === "status") process.stdout.write(`${message}\n`);
      else process.stderr.write(`partner-yield: ${message}\n`);
      return EXIT_SCHEMA;
    }
    if (command === "import-fixtures") {
      process.stdout.write(`${where}: importing ${escapeUnsafe(rest[0]!)}\n`);
      const overwrite = values.overwrite === true;
      const { tables, differing } = await postgres.importDataSet(pool, postgres.dataSetOf(data!), {
        overwrite,
        secretKeys,
      });
      const head = ["inserted", "overwritten", "kept", "unchanged"];
      process.stdout.write(`  ${"table".padEnd(16)} ${head.map((h) => h.padStart(11)).join(" ")}\n`);
      for (const [table, c] of Object.entries(tables))
        process.stdout.write(
          `  ${table.padEnd(16)} ${[c.inserted, c.updated, c.kept, c.unchanged].map((n) => String(n).padStart(11)).join(" ")}\n`,
        );
      const rows = Object.values(tables);
      const inserted = rows.reduce((n, c) => n + c.inserted, 0);
      const written = rows.reduce((n, c) => n + c.inserted + c.updated, 0);
      if (differing.length > 0) {
        const shown = differing.slice(0, 20).map((d) => `    ${escapeUnsafe(d)}`);
        if (differing.length > 20) shown.push(`    … and ${differing.length - 20} more`);
        process.stdout.write(
          overwrite
            ? `overwritten with the files' values (they differed from the files):\n${shown.join("\n")}\n`
            : `kept as the database has them (they differ from the files; --overwrite writes the files' values):\n${shown.join("\n")}\n`,
        );
      }
      await postgres.recordAudit(pool, {
        actor: auditActor(values.actor, env),
        command: "db import-fixtures",
        target: rest[0]!,
        outcome: "done",
        before: null,
        after: { overwrite, tables, differing: differing.slice(0, 100) },
      });
      process.stdout.write(
        written === 0
          ? "nothing changed\n"
          : `${written} row(s) written (${inserted} inserted, ${written - inserted} overwritten)\n`,
      );
      return EXIT_OK;
    }
    if (command === "rekey-secrets") {
      const report = await postgres.rekeySecrets(pool, secretKeys!);
      await postgres.recordAudit(pool, {
        actor: auditActor(values.actor, env),
        command: "db rekey-secrets",
        target: `key ${report.keyId}`,
        outcome: "done",
        before: null,
        after: report,
      });
      process.stdout.write(
        `${where}: signing secrets under key ${report.keyId}: ${report.sealed} encrypted from plain text, ` +
          `${report.rekeyed} re-encrypted from an older key, ${report.unchanged} already under it\n`,
      );
      return EXIT_OK;
    }
    const counts = await postgres.countRows(pool);
    process.stdout.write(
      [
        `${where}`,
        `  schema version   ${status.current} ${status.newer.length > 0 ? `(newer than this partner-yield's ${status.latest}, which runs on it)` : "(current)"}`,
        `  runs releases    ${releases(status.supported)} (schema-code versions; this partner-yield is ${status.latest})`,
        `  partners         ${counts.partners}`,
        `  api keys         ${counts.apiKeys.active} active, ${counts.apiKeys.revoked} revoked`,
        `  signing secrets  ${counts.signingSecrets.active} active, ${counts.signingSecrets.revoked} revoked`,
        `  products         ${counts.products.active} active, ${counts.products.paused} paused, ${counts.products.deprecated} deprecated`,
        `  vaults           ${counts.vaults} (${counts.vaultHoldings} holdings)`,
        `  asset prices     ${counts.assetPrices}`,
        `  events           ${counts.events}`,
        "",
      ].join("\n"),
    );
    return EXIT_OK;
  } catch (error) {
    const { code, message } = databaseFailure(error, command);
    return fail(code, message);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/**
 * The PostgreSQL URL of a command: `--database-url`, else `DATABASE_URL`; refused when neither is
 * given or it is not a postgres:// URL (the value is not echoed: it may hold a password).
 */
export function databaseUrlOf(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Result<string, "missing" | "malformed"> {
  const url = flag ?? (env["DATABASE_URL"] === "" ? undefined : env["DATABASE_URL"]);
  if (url === undefined) return refuse("missing", "no database: give --database-url URL or set DATABASE_URL");
  if (!/^postgres(ql)?:\/\//.test(url) || !URL.canParse(url))
    return refuse(
      "malformed",
      `${flag === undefined ? "DATABASE_URL" : "--database-url"} must be a postgres:// URL`,
    );
  return accept(url);
}

function parseDbFlags(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      "database-url": { type: "string" },
      env: { type: "string" },
      overwrite: { type: "boolean" },
      actor: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** The schema-code versions that run on a schema: "5 to 6", or "5 only". */
function releases({ oldest, newest }: { readonly oldest: number; readonly newest: number }): string {
  return oldest === newest ? `${newest} only` : `${oldest} to ${newest}`;
}

function usage(message: string): number {
  return fail(EXIT_USAGE, `${message}\nRun \`partner-yield db --help\` for the commands and options.`);
}

/** The connection URL of the running command: its credentials are masked in every message. */
let connectionUrls: readonly string[] = [];

// Escaped as written: a fixture error quotes the directory given, a value may hold control sequences.
const fail = failureReporter(
  (text) => process.stderr.write(text),
  () => connectionUrls,
);
