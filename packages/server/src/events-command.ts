/**
 * `partner-yield events tail | consumers list | consumers reset NAME --to ID | prune --older-than
 * DAYS`: the accepted events of a PostgreSQL deployment and the consumers processing them
 * (store-postgres README "Processing events"). The store package is imported only here, when an
 * `events` command runs.
 * @module
 */
import { parseArgs } from "node:util";
import { CONSUMER_NAME, type StoredEvent } from "@partner-yield/core";
import { echoInput, escapeUnsafe } from "@partner-yield/core/adapters";
import { argsErrorMessage } from "./args-error.js";
import { auditActor } from "./audit-command.js";
import { databaseFailure, EXIT_OK, EXIT_SCHEMA, EXIT_USAGE, failureReporter } from "./command-exit.js";
import { databaseUrlOf } from "./db-command.js";
import { redactUrl } from "./redact-url.js";

/** No such event (reset --to an id the log does not hold). */
const EXIT_NOT_FOUND = 4;

/** The text of `partner-yield events --help`. */
export function eventsHelpText(): string {
  return [
    "partner-yield events: the accepted events in PostgreSQL and the consumers processing them",
    "",
    "Usage:",
    "  partner-yield events tail [--follow] [--partner ID] [--env ENV] [--type T] [--last N] [--json]",
    "                                        the last N events (default 20) in commit order, oldest",
    "                                        first; --follow then prints each new one as it commits",
    "                                        (until Ctrl-C)",
    "  partner-yield events consumers list [--json]",
    "                                        each consumer: position (last acknowledged event id),",
    "                                        lag in events and in seconds (age of the oldest pending)",
    "  partner-yield events consumers reset NAME --to ID",
    "                                        put NAME's checkpoint just after event ID (0: the start);",
    "                                        registers NAME when new",
    "  partner-yield events prune --older-than DAYS [--dry-run]",
    "                                        delete events received more than DAYS days ago that every",
    "                                        registered consumer has acknowledged; DAYS >= 30",
    "  partner-yield events --help           this text",
    "",
    "Options:",
    "  --database-url URL   DATABASE_URL     postgres://user:password@host:port/database (required)",
    "  --partner ID, --env sandbox|production, --type EVENT_TYPE   tail only the events that match",
    "  --json                                one JSON document per line (tail) or one document (list)",
    "  --actor NAME         PARTNER_YIELD_ACTOR consumers reset, prune: who the admin audit records",
    "                                        (`partner-yield audit list`); default the OS user and host",
    "",
    "tail registers nothing: it holds no event back from prune. Consumers are created by the",
    "applications that process events (PostgresEventConsumers); a consumer's name is its checkpoint.",
    "prune never deletes an event younger than 30 days, the idempotency window (CONTRACT §5: a retry",
    "within it gets its original event_id), nor one a registered consumer has not acknowledged; it",
    "reports both counts. --dry-run counts without deleting.",
    "",
    "Exit status: 0 done; 1 the database cannot be reached or a statement failed; 2 a bad command",
    "line; 3 the schema is not one this partner-yield runs on (run `partner-yield db migrate`); 4 reset",
    "--to an event the log does not hold (never stored, or pruned).",
    "",
  ].join("\n");
}

export interface EventsCommandOptions {
  readonly stdout?: ((text: string) => void) | undefined;
  readonly stderr?: ((text: string) => void) | undefined;
  /** Ends `tail --follow` (default: SIGINT or SIGTERM). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Runs an `events` command (argv after `events`); returns the exit status.
 * @example process.exitCode = await runEventsCommand(["consumers", "list"], process.env);
 */
export async function runEventsCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  options: EventsCommandOptions = {},
): Promise<number> {
  const out = options.stdout ?? ((text: string) => void process.stdout.write(text));
  const toStderr = options.stderr ?? ((text: string) => void process.stderr.write(text));
  let urls: readonly string[] = [];
  const fail = failureReporter(toStderr, () => urls);
  const usage = (message: string) =>
    fail(EXIT_USAGE, `${message}\nRun \`partner-yield events --help\` for the commands and options.`);

  let parsed: ReturnType<typeof parseEventsFlags>;
  try {
    parsed = parseEventsFlags(argv);
  } catch (error) {
    return usage(argsErrorMessage(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    out(eventsHelpText());
    return EXIT_OK;
  }
  const [command, ...rest] = positionals;
  const commands = "tail, consumers list, consumers reset NAME --to ID or prune --older-than DAYS";
  if (command === undefined) return usage(`missing command: ${commands}`);
  let sub: "tail" | "list" | "reset" | "prune";
  if (command === "tail" || command === "prune") {
    if (rest.length > 0) return usage(`unexpected argument ${echoInput(rest[0]!)}`);
    sub = command;
  } else if (command === "consumers") {
    const [action, ...args] = rest;
    if (action === "list" && args.length === 0) sub = "list";
    else if (action === "reset") {
      if (args.length !== 1) return usage("consumers reset needs one consumer NAME, then --to ID");
      sub = "reset";
    } else
      return usage(
        `consumers takes list or reset NAME --to ID${action === undefined ? "" : `, not ${echoInput(action)}`}`,
      );
  } else return usage(`unknown command ${echoInput(command)}: ${commands}`);

  // Each flag belongs to its commands.
  const allowed: Record<typeof sub, readonly string[]> = {
    tail: ["follow", "partner", "env", "type", "json", "last"],
    list: ["json"],
    reset: ["to", "actor"],
    prune: ["older-than", "dry-run", "actor"],
  };
  for (const flag of [
    "follow",
    "partner",
    "env",
    "type",
    "json",
    "last",
    "to",
    "older-than",
    "dry-run",
    "actor",
  ] as const)
    if (values[flag] !== undefined && !allowed[sub].includes(flag))
      return usage(
        `--${flag} does not apply to ${sub === "list" || sub === "reset" ? `consumers ${sub}` : sub}`,
      );

  if (values.env !== undefined && values.env !== "sandbox" && values.env !== "production")
    return usage(`--env must be sandbox or production, not ${echoInput(values.env)}`);
  const last = values.last === undefined ? 20 : wholeNumber(values.last);
  if (last === undefined || last > 10_000)
    return usage(`--last must be a whole number from 0 to 10000, not ${echoInput(values.last!)}`);
  const name = sub === "reset" ? rest[1]! : undefined;
  if (name !== undefined && !CONSUMER_NAME.test(name))
    return usage(
      `consumer name ${echoInput(name)} must be lowercase letters, digits and _ . : - (at most 128)`,
    );
  let to: number | undefined;
  if (sub === "reset") {
    if (values.to === undefined) return usage("consumers reset needs --to ID (0: the start of the log)");
    to = wholeNumber(values.to);
    if (to === undefined)
      return usage(`--to must be an event id (a whole number, 0 for the start), not ${echoInput(values.to)}`);
  }
  let days: number | undefined;
  if (sub === "prune") {
    if (values["older-than"] === undefined) return usage("prune needs --older-than DAYS (at least 30)");
    days = wholeNumber(values["older-than"]);
    if (days === undefined || days < 30)
      return usage(
        `--older-than must be a whole number of days, at least 30 (the idempotency window, CONTRACT §5), not ${echoInput(values["older-than"])}`,
      );
  }
  const database = databaseUrlOf(values["database-url"], env);
  if (!database.ok) return usage(database.reason);
  const url = database.value;
  urls = [url];

  const postgres = await import("@partner-yield/store-postgres");
  const pool = postgres.createPool({ connectionString: url, max: 2, statementTimeoutMs: 60_000 });
  const where = redactUrl(url);
  try {
    const status = await postgres.schemaStatus(pool);
    if (status.current < 7 || status.pending.length > 0)
      return fail(
        EXIT_SCHEMA,
        `${where}: schema version ${status.current}, this partner-yield needs ${status.latest}: run \`partner-yield db migrate\` first`,
      );
    if (sub === "list") {
      const consumers = new postgres.PostgresEventConsumers(pool, { connection: false });
      const states = await consumers.consumers();
      if (values.json === true) {
        out(
          `${JSON.stringify({
            consumers: states.map((s) => ({
              name: s.name,
              position: s.position,
              lag_events: s.lagEvents,
              lag_seconds: Math.round(s.lagSeconds * 1000) / 1000,
              acknowledged_at:
                s.acknowledgedAt === undefined ? null : new Date(s.acknowledgedAt).toISOString(),
            })),
          })}\n`,
        );
        return EXIT_OK;
      }
      if (states.length === 0) {
        out(`${where}: no consumer registered\n`);
        return EXIT_OK;
      }
      const width = Math.max(8, ...states.map((s) => s.name.length));
      out(
        `${"consumer".padEnd(width)}  ${"position".padStart(10)}  ${"lag events".padStart(10)}  ${"lag seconds".padStart(11)}  acknowledged at\n`,
      );
      for (const s of states)
        out(
          `${s.name.padEnd(width)}  ${String(s.position).padStart(10)}  ${String(s.lagEvents).padStart(10)}  ${s.lagSeconds.toFixed(1).padStart(11)}  ${s.acknowledgedAt === undefined ? "never" : new Date(s.acknowledgedAt).toISOString()}\n`,
        );
      return EXIT_OK;
    }
    if (sub === "reset") {
      const consumers = new postgres.PostgresEventConsumers(pool, { connection: false });
      const before = (await consumers.consumers()).find((c) => c.name === name);
      try {
        await consumers.reset(name!, to!);
      } catch (error) {
        if (error instanceof RangeError)
          return fail(EXIT_NOT_FOUND, `cannot reset ${name}: ${error.message}`);
        throw error;
      }
      await postgres.recordAudit(pool, {
        actor: auditActor(values.actor, env),
        command: "consumers reset", // `events consumers reset` (admin_audit takes two words)
        target: name!,
        outcome: "done",
        before: before === undefined ? null : { position: before.position },
        after: { position: to },
      });
      out(`${name}: checkpoint set just after event ${to}${to === 0 ? " (the start of the log)" : ""}\n`);
      return EXIT_OK;
    }
    if (sub === "prune") {
      if (values["dry-run"] === true) {
        const counted = await pool.query<{ old: string; kept: string }>(
          `select count(*)::text as old, count(*) filter (where exists (select 1 from event_consumers c
             where (e.xid, e.id) > (c.position_xid, c.position_id)))::text as kept
           from events e where e.received_at < now() - make_interval(days => $1::int)`,
          [days],
        );
        const row = counted.rows[0]!;
        out(
          `${where}: would delete ${Number(row.old) - Number(row.kept)} event(s) received more than ${days} days ago; ${row.kept} kept (not yet acknowledged by a consumer)\n`,
        );
        return EXIT_OK;
      }
      const report = await postgres.pruneEvents(pool, days!);
      // The record of the deletion; /metrics' events_pruned sums these rows' `deleted`.
      await postgres.recordAudit(pool, {
        actor: auditActor(values.actor, env),
        command: "events prune",
        target: null,
        outcome: "done",
        before: null,
        after: {
          older_than_days: days,
          deleted: report.deleted,
          kept_unacknowledged: report.keptUnacknowledged,
        },
      });
      out(
        `${where}: deleted ${report.deleted} event(s) received more than ${days} days ago; ${report.keptUnacknowledged} kept (not yet acknowledged by a consumer)\n`,
      );
      return EXIT_OK;
    }
    // tail
    const filter = {
      partner: values.partner,
      environment: values.env as "sandbox" | "production" | undefined,
      type: values.type,
    };
    const print = (events: readonly StoredEvent[]) => {
      for (const e of events) out(values.json === true ? `${JSON.stringify(eventJson(e))}\n` : eventLine(e));
    };
    const start = await postgres.tailStart(pool, last!, filter);
    print(start.events);
    if (values.follow !== true) return EXIT_OK;
    const stop = options.signal ?? signalOnExit();
    const consumers = new postgres.PostgresEventConsumers(pool);
    let position = start.position;
    try {
      while (!stop.aborted) {
        const batch = await postgres.readLog(pool, position, 1000, filter);
        print(batch.events);
        position = batch.position;
        if (batch.events.length < 1000) await consumers.waitForEvents(1000, stop);
      }
    } finally {
      await consumers.close();
    }
    return EXIT_OK;
  } catch (error) {
    const { code, message } = databaseFailure(error, `events ${sub}`);
    return fail(code, message);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** An event as `tail --json` prints it: the stored fields, in the wire's snake case. */
function eventJson(e: StoredEvent): Record<string, unknown> {
  return {
    id: e.id,
    partner_id: e.partnerId,
    environment: e.environment,
    event_type: e.eventType,
    idempotency_key: e.idempotencyKey,
    occurred_at: e.occurredAt,
    received_at: new Date(e.receivedAt).toISOString(),
    data: e.data,
  };
}

/** One line of `tail`: id, time received, partner, environment, type, key (escaped: partner input). */
function eventLine(e: StoredEvent): string {
  return `${escapeUnsafe(
    [
      String(e.id).padStart(8),
      new Date(e.receivedAt).toISOString(),
      e.partnerId,
      e.environment,
      e.eventType,
      `key=${e.idempotencyKey}`,
    ].join("  "),
  )}\n`;
}

/** A non-negative safe integer from its decimal text, or undefined. */
function wholeNumber(text: string): number | undefined {
  if (!/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/** Aborted by the first SIGINT or SIGTERM. */
function signalOnExit(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return controller.signal;
}

function parseEventsFlags(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      "database-url": { type: "string" },
      follow: { type: "boolean", short: "f" },
      partner: { type: "string" },
      env: { type: "string" },
      type: { type: "string" },
      json: { type: "boolean" },
      last: { type: "string", short: "n" },
      to: { type: "string" },
      "older-than": { type: "string" },
      "dry-run": { type: "boolean" },
      actor: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}
