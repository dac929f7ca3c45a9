/**
 * `partner-yield partners|keys|secrets …`: runs one command of the table in `admin-commands.ts`
 * against PostgreSQL (`--database-url` / `DATABASE_URL`), or against a `PartnerAdmin` handed in
 * (tests, the in-memory one). Output: text on stdout, or one JSON document with `--json`;
 * refusals and warnings on stderr (with `--json`, in the document). A key or secret is printed
 * only by the command that creates it, once, on stdout.
 * @module
 */
import { parseArgs } from "node:util";
import { type PartnerAdmin, StoreUnavailableError } from "@partner-yield/core";
import { echoInput, escapeUnsafe } from "@partner-yield/core/adapters";
import type { AuditEntry } from "@partner-yield/store-postgres";
import {
  ADMIN_COMMANDS,
  ADMIN_EXIT,
  ADMIN_EXIT_MEANING,
  type AdminCommand,
  type AdminExit,
  type AdminGroup,
  REFUSAL_EXIT,
} from "./admin-commands.js";
import { argsErrorMessage } from "./args-error.js";
import { auditActor } from "./audit-command.js";
import { databaseUrlOf } from "./db-command.js";
import { redactConnectionText, redactUrl } from "./redact-url.js";

export const ADMIN_GROUPS: readonly AdminGroup[] = ["partners", "keys", "secrets"];

const GROUP_TITLES: Readonly<Record<AdminGroup, string>> = {
  partners: "the partners, and whether each is verified for production",
  keys: "partners' API keys (CONTRACT §4): created, listed, revoked, promoted to production",
  secrets: "partners' webhook signing secrets (CONTRACT §4): created, listed, revoked — rotation",
};

export interface AdminCliOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout?: ((text: string) => void) | undefined;
  readonly stderr?: ((text: string) => void) | undefined;
  /** Used instead of opening `--database-url` (tests; `MemoryPartnerAdmin`). */
  readonly admin?: PartnerAdmin | undefined;
  /** Where an entry of the admin audit goes with `admin` (PostgreSQL: its `admin_audit` table). */
  readonly audit?: ((entry: AuditEntry) => Promise<void>) | undefined;
}

/**
 * Runs `partner-yield GROUP ARGV…`; returns the exit status.
 * @example process.exitCode = await runAdminCommand("keys", ["list", "--partner", "acme"], { env: process.env });
 */
export async function runAdminCommand(
  group: AdminGroup,
  argv: readonly string[],
  options: AdminCliOptions,
): Promise<number> {
  const out = options.stdout ?? ((text: string) => process.stdout.write(text));
  // Every message is escaped once more as it is written: no control sequence reaches the terminal,
  // whatever quoted it (each echoed value is already escaped and cut by `echoInput`).
  const toStderr = options.stderr ?? ((text: string) => process.stderr.write(text));
  const err = (text: string) => toStderr(escapeUnsafe(text, { keepNewlines: true }));
  const commands = ADMIN_COMMANDS.filter((c) => c.group === group);
  const names = commands.map((c) => c.name).join(", ");
  const usage = (message: string, help = `partner-yield ${group} --help`): number => {
    err(`partner-yield: ${message}\nRun \`${help}\` for the commands, options and exit statuses.\n`);
    return ADMIN_EXIT.usage;
  };

  const name = argv[0];
  if (name === undefined || name.startsWith("-")) {
    if (argv.includes("--help") || argv.includes("-h")) {
      out(groupHelp(group));
      return ADMIN_EXIT.ok;
    }
    return usage(`missing command: ${names}`);
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) return usage(`unknown command ${echoInput(name)} for ${group}: ${names}`);
  const helpRef = `partner-yield ${group} ${command.name} --help`;

  let parsed: ReturnType<typeof parseCommand>;
  try {
    parsed = parseCommand(command, argv.slice(1));
  } catch (error) {
    return usage(argsErrorMessage(error), helpRef);
  }
  const positionals = parsed.positionals;
  const values = parsed.values as Readonly<Record<string, string | boolean | undefined>>;
  if (values["help"] === true) {
    out(commandHelp(command));
    return ADMIN_EXIT.ok;
  }
  if (positionals.length < command.args.length)
    return usage(`missing ${command.args.slice(positionals.length).join(" ")}`, helpRef);
  if (positionals.length > command.args.length)
    return usage(
      `unexpected argument ${echoInput(positionals[command.args.length]!)}: ${group} ${command.name} takes ` +
        (command.args.length === 0 ? "no arguments" : command.args.join(" ")),
      helpRef,
    );
  for (const flag of command.flags)
    if (flag.required === true && (values[flag.flag] === undefined || values[flag.flag] === ""))
      return usage(`missing --${flag.flag} ${flag.value ?? ""}`.trimEnd(), helpRef);
  const json = values["json"] === true;

  let urls: readonly string[] = [];
  const failure = (code: AdminExit, errorCode: string, raw: string, hint?: string): number => {
    // A driver's message may quote the connection URL or its password.
    const message = redactConnectionText(raw, urls);
    if (json)
      out(`${jsonLine({ error: { code: errorCode, message, ...(hint === undefined ? {} : { hint }) } })}\n`);
    err(`partner-yield: ${message}\n${hint === undefined ? "" : `  ${hint}\n`}`);
    return code;
  };

  let admin = options.admin;
  let audit = options.audit;
  /** Signing secrets this command writes go to the database in plain text (no key set). */
  let plainSecrets = false;
  let close = async () => {};
  let where = "the given PartnerAdmin";
  if (admin === undefined) {
    const database = databaseUrlOf(values["database-url"] as string | undefined, options.env);
    if (!database.ok) return usage(database.reason, helpRef);
    urls = [database.value];
    where = redactUrl(database.value);
    const postgres = await import("@partner-yield/store-postgres");
    const pool = postgres.createPool({
      connectionString: database.value,
      max: 2,
      statementTimeoutMs: 10_000,
    });
    close = () => pool.end().catch(() => undefined);
    try {
      await postgres.assertSchemaCurrent(pool);
    } catch (error) {
      await close();
      if (error instanceof StoreUnavailableError)
        return failure(ADMIN_EXIT.unavailable, "database_unavailable", `${where}: ${error.message}`);
      if ((error as Error).name === "SchemaVersionError")
        return failure(ADMIN_EXIT.schema, "schema_not_current", `${where}: ${(error as Error).message}`);
      throw error;
    }
    let secretKeys: InstanceType<typeof postgres.SecretKeyring> | undefined;
    try {
      secretKeys = postgres.SecretKeyring.fromEnv(options.env);
    } catch (error) {
      await close();
      return usage((error as Error).message, helpRef);
    }
    admin = new postgres.PostgresPartnerAdmin(pool, { secretKeys });
    plainSecrets = secretKeys === undefined;
    audit = (entry) => postgres.recordAudit(pool, entry);
  }

  try {
    const outcome = await command.run(admin, { args: positionals, flags: values });
    // Every command that changes something, or is refused a change, is recorded; never a credential.
    if (command.name !== "list" && audit !== undefined)
      await audit({
        actor: auditActor(values["actor"] as string | undefined, options.env),
        command: `${command.group} ${command.name}`,
        target: auditTarget(positionals, values),
        outcome: outcome.ok ? "done" : outcome.refusal.code,
        ...(outcome.ok ? beforeAfter(outcome.json) : { before: null, after: null }),
      });
    if (!outcome.ok) {
      const { code, reason } = outcome.refusal;
      return failure(REFUSAL_EXIT[code], code, reason, outcome.hint);
    }
    const warnings = [
      ...(outcome.warnings ?? []),
      ...(plainSecrets && command.group === "secrets" && command.name === "create"
        ? [
            "the signing secret is stored in plain text: no PARTNER_YIELD_SECRET_KEYS is set (fine for a sandbox; in production set it and run `partner-yield db rekey-secrets`)",
          ]
        : []),
    ];
    if (json) out(`${jsonLine({ ...outcome.json, warnings })}\n`);
    else {
      out(`${outcome.text}\n`);
      for (const warning of warnings) err(`partner-yield: warning: ${warning}\n`);
    }
    return ADMIN_EXIT.ok;
  } catch (error) {
    if (error instanceof StoreUnavailableError)
      return failure(ADMIN_EXIT.unavailable, "database_unavailable", `${where}: ${error.message}`);
    throw error;
  } finally {
    await close();
  }
}

/**
 * One JSON document on a line, with the characters JSON leaves raw that a terminal must not get
 * (C1 controls, bidi and zero-width formatting, line separators: stored before names and labels
 * refused them) written as `\\u` escapes: the same JSON to a parser.
 */
function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, (c) => {
    let escaped = "";
    for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return escaped;
  });
}

/** What a command acted on: its argument and partner, e.g. `12 (partner acme)`. */
function auditTarget(args: readonly string[], flags: Readonly<Record<string, unknown>>): string | null {
  const partner = typeof flags["partner"] === "string" ? `partner ${flags["partner"]}` : undefined;
  if (args[0] === undefined) return partner ?? null;
  return partner === undefined ? args[0] : `${args[0]} (${partner})`;
}

/**
 * The rows before and after, from a command's JSON, without the credential it printed: created,
 * nothing before; revoked or verified, the state it left (`changed` says whether it did).
 */
function beforeAfter(json: Record<string, unknown>): { before: unknown; after: unknown } {
  const { credential: _credential, notice: _notice, kind: _kind, warnings: _warnings, ...after } = json;
  const changed = json["changed"];
  if (changed === undefined) return { before: null, after };
  const name = ["key", "secret", "partner"].find((n) => json[n] !== undefined);
  if (name === undefined || changed === false) return { before: after, after };
  const row = json[name] as Record<string, unknown>;
  const before = {
    [name]: "verified" in row ? { ...row, verified: false } : { ...row, status: "active", revoked_at: null },
  };
  return { before, after };
}

function parseCommand(command: AdminCommand, argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      ...Object.fromEntries(
        command.flags.map((f) => [
          f.flag,
          { type: f.value === undefined ? ("boolean" as const) : ("string" as const) },
        ]),
      ),
      "database-url": { type: "string" },
      actor: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function usageLine(command: AdminCommand): string {
  const flags = command.flags.map((f) => {
    const text = `--${f.flag}${f.value === undefined ? "" : ` ${f.value}`}`;
    return f.required === true ? text : `[${text}]`;
  });
  return ["partner-yield", command.group, command.name, ...command.args, ...flags].join(" ");
}

function exitLines(command: AdminCommand | undefined): string[] {
  const codes: AdminExit[] = [0, 1, 2, 3, ...(command?.refusals ?? [4, 5])];
  const meaning = (code: AdminExit) => {
    if (code !== ADMIN_EXIT.refused || command === undefined) return ADMIN_EXIT_MEANING[code];
    return `${ADMIN_EXIT_MEANING[code]} (${refusedBy(command)})`;
  };
  return ["Exit status:", ...codes.map((code) => `  ${code}  ${meaning(code)}`)];
}

function refusedBy(command: AdminCommand): string {
  if (command.group === "partners") return "the partner id is taken";
  if (command.name === "promote")
    return "the partner is not verified, or already holds an active production key";
  return "a production key for a partner that is not verified";
}

const COMMON_OPTIONS: readonly (readonly [string, string])[] = [
  [
    "--database-url URL",
    "PostgreSQL, postgres://user:password@host:port/database (or DATABASE_URL); required",
  ],
  ["--json", 'print one JSON document on stdout (also for a refusal: {"error":{code,message}}), for scripts'],
  [
    "--actor NAME",
    "who the admin audit records (or PARTNER_YIELD_ACTOR; default the OS user@host); `partner-yield audit list`",
  ],
  ["-h, --help", "this text"],
];

function commandHelp(command: AdminCommand): string {
  const options: (readonly [string, string])[] = [
    ...command.flags.map(
      (f) =>
        [
          `--${f.flag}${f.value === undefined ? "" : ` ${f.value}`}`,
          `${f.help}${f.required === true ? "; required" : ""}`,
        ] as const,
    ),
    ...COMMON_OPTIONS,
  ];
  const width = Math.max(...options.map(([o]) => o.length)) + 2;
  return [
    `partner-yield ${command.group} ${command.name}: ${command.summary}`,
    "",
    "Usage:",
    `  ${usageLine(command)} [--database-url URL] [--json]`,
    "",
    "Options:",
    ...options.map(([o, h]) => `  ${o.padEnd(width)}${h}`),
    ...(command.details.length === 0 ? [] : ["", ...command.details]),
    "",
    ...exitLines(command),
    "",
  ].join("\n");
}

function groupHelp(group: AdminGroup): string {
  const commands = ADMIN_COMMANDS.filter((c) => c.group === group);
  const lines = commands.map((c) => [usageLine(c), c.summary] as const);
  return [
    `partner-yield ${group}: ${GROUP_TITLES[group]}`,
    "",
    "Usage:",
    ...lines.flatMap(([usage, summary]) => [`  ${usage}`, `      ${summary}`]),
    "",
    "Every command takes --database-url URL (or DATABASE_URL) and --json; the schema must be current",
    `(\`partner-yield db migrate\`). \`partner-yield ${group} COMMAND --help\` gives a command's details.`,
    "A key or signing secret is printed once, on stdout, by the command that creates it; no other",
    "command prints one, and nothing secret is written to stderr.",
    "",
    ...exitLines(undefined),
    "",
  ].join("\n");
}
