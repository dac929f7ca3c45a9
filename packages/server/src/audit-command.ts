/**
 * `partner-yield audit list`: the record of admin commands (store-postgres admin-audit.ts), and
 * who an admin command is recorded as: `--actor NAME`, else PARTNER_YIELD_ACTOR, else the OS user
 * and host (with the user sudo ran it for, when it did).
 * @module
 */
import { hostname, userInfo } from "node:os";
import { parseArgs } from "node:util";
import { echoInput, escapeUnsafe } from "@partner-yield/core/adapters";
import { argsErrorMessage } from "./args-error.js";
import { databaseUrlOf } from "./db-command.js";
import { redactConnectionText, redactUrl } from "./redact-url.js";

/**
 * Who runs this admin command, for `admin_audit`.
 * @example auditActor(undefined, process.env); // "alice@deploy-1"
 */
export function auditActor(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const given = flag ?? (env["PARTNER_YIELD_ACTOR"] || undefined);
  if (given !== undefined && given.trim() !== "") return given.trim().slice(0, 200);
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = env["USER"] ?? "unknown";
  }
  const sudo = env["SUDO_USER"];
  return `${user}@${hostname()}${sudo === undefined || sudo === user ? "" : ` (sudo by ${sudo})`}`;
}

export function auditHelpText(): string {
  return [
    "partner-yield audit: the record of admin commands",
    "",
    "Usage:",
    "  partner-yield audit list [--since TIME] [--limit N] [--json] [--database-url URL]",
    "",
    "Options:",
    "  --since TIME         only entries at or after TIME (RFC 3339, e.g. 2026-11-27T00:00:00Z, or a date)",
    "  --limit N            at most N entries, the latest first (1 to 10000; default 100)",
    '  --json               one JSON document on stdout: {"entries":[{id,at,actor,command,target,outcome,before,after}]}',
    "  --database-url URL   PostgreSQL (or DATABASE_URL); required",
    "  -h, --help           this text",
    "",
    "Every admin command that changes something, or is refused a change, writes one entry: partners",
    "add|verify, keys create|revoke|promote, secrets create|revoke, db import-fixtures, db",
    "rekey-secrets. An entry names who ran it (--actor NAME on the command, else PARTNER_YIELD_ACTOR,",
    "else the OS user and host), when, the command, its target, its outcome (done, or the refusal's",
    "code) and the rows before and after: ids, prefixes and last four characters, never a key, a",
    "signing secret or an encryption key.",
    "",
    "Exit status: 0 done; 1 the database cannot be reached; 2 a bad command line; 3 the schema is not",
    "current (run `partner-yield db migrate`).",
    "",
  ].join("\n");
}

/**
 * Runs `partner-yield audit ARGV…`; returns the exit status.
 * @example process.exitCode = await runAuditCommand(["list", "--limit", "20"], process.env);
 */
export async function runAuditCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  out: (text: string) => void = (text) => process.stdout.write(text),
  err: (text: string) => void = (text) => process.stderr.write(text),
): Promise<number> {
  const usage = (message: string): number => {
    err(`partner-yield: ${escapeUnsafe(message)}\nRun \`partner-yield audit --help\` for the options.\n`);
    return 2;
  };
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    return usage(argsErrorMessage(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    out(auditHelpText());
    return 0;
  }
  if (positionals[0] !== "list")
    return usage(
      positionals[0] === undefined
        ? "missing command: list"
        : `unknown command ${echoInput(positionals[0])}: list`,
    );
  if (positionals.length > 1) return usage(`unexpected argument ${echoInput(positionals[1]!)}`);
  let since: Date | undefined;
  if (values.since !== undefined) {
    since = new Date(values.since);
    if (!/^\d{4}-\d{2}-\d{2}/.test(values.since) || Number.isNaN(since.getTime()))
      return usage(`--since must be an RFC 3339 time or a date, not ${echoInput(values.since)}`);
  }
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!/^[0-9]+$/.test(values.limit ?? "100") || limit < 1 || limit > 10_000)
    return usage(`--limit must be an integer from 1 to 10000, not ${echoInput(values.limit ?? "")}`);
  const database = databaseUrlOf(values["database-url"], env);
  if (!database.ok) return usage(database.reason);
  const postgres = await import("@partner-yield/store-postgres");
  const pool = postgres.createPool({ connectionString: database.value, max: 1, statementTimeoutMs: 10_000 });
  const where = redactUrl(database.value);
  const fail = (code: number, message: string) => {
    err(`partner-yield: ${escapeUnsafe(redactConnectionText(`${where}: ${message}`, [database.value]))}\n`);
    return code;
  };
  try {
    await postgres.assertSchemaCurrent(pool);
    const entries = await postgres.listAudit(pool, { since, limit });
    if (values.json === true) out(`${JSON.stringify({ entries })}\n`);
    else if (entries.length === 0) out("No admin commands recorded.\n");
    else
      for (const e of entries)
        out(
          `${escapeUnsafe(`${e.at.replace(/\.\d+Z$/, "Z")}  ${e.actor}  ${e.command}${e.target === null ? "" : ` ${e.target}`}  ${e.outcome}`)}\n` +
            (e.before === null ? "" : `    before ${escapeUnsafe(JSON.stringify(e.before))}\n`) +
            (e.after === null ? "" : `    after  ${escapeUnsafe(JSON.stringify(e.after))}\n`),
        );
    return 0;
  } catch (error) {
    if ((error as Error).name === "SchemaVersionError") return fail(3, (error as Error).message);
    return fail(1, (error as Error).message);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      since: { type: "string" },
      limit: { type: "string" },
      json: { type: "boolean" },
      "database-url": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}
