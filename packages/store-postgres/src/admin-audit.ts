/**
 * The record of admin commands (migration 0006's `admin_audit`): who ran what, on what, when, with
 * the rows before and after. Callers pass summaries only — ids, prefixes, last four characters —
 * never a key, a signing secret or an encryption key; `recordAudit` also drops any field named
 * like one, as a second guard.
 */
import type pg from "pg";
import { guarded } from "./errors.js";

export interface AuditEntry {
  /** Who: `--actor`, PARTNER_YIELD_ACTOR, or the OS user and host. */
  readonly actor: string;
  /** What: `keys revoke`, `db import-fixtures`… */
  readonly command: string;
  /** On what: a partner id, a key id, a directory. */
  readonly target: string | null;
  /** `done`, or the refusal's code. */
  readonly outcome: string;
  readonly before: unknown;
  readonly after: unknown;
}

export interface AuditRow extends AuditEntry {
  readonly id: string;
  /** RFC 3339. */
  readonly at: string;
}

/** Field names that could hold a credential: never written. */
const SECRET_FIELD = /^(credential|api_key|signing_secret|secret_value|key_material|sealed|notice)$/;

function scrub(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrub);
  if (value === null || typeof value !== "object") {
    // A value shaped like a key or secret is never written, whatever its field.
    return typeof value === "string" && /^(ypk_|whsec_)/.test(value) ? "[withheld]" : value;
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([k]) => !SECRET_FIELD.test(k))
      .map(([k, v]) => [k, scrub(v)]),
  );
}

/** Appends one entry. */
export async function recordAudit(pool: pg.Pool, entry: AuditEntry): Promise<void> {
  await guarded("recording the admin audit", () =>
    pool.query(
      `insert into admin_audit (actor, command, target, outcome, before, after)
       values ($1, $2, $3, $4, $5::jsonb, $6::jsonb)`,
      [
        entry.actor.slice(0, 200),
        entry.command,
        entry.target === null ? null : entry.target.slice(0, 500),
        entry.outcome,
        entry.before === undefined || entry.before === null ? null : JSON.stringify(scrub(entry.before)),
        entry.after === undefined || entry.after === null ? null : JSON.stringify(scrub(entry.after)),
      ],
    ),
  );
}

/** The latest entries first, at most `limit`, from `since` on. */
export async function listAudit(
  pool: pg.Pool,
  options: { readonly since?: Date | undefined; readonly limit?: number | undefined } = {},
): Promise<AuditRow[]> {
  const result = await guarded("reading the admin audit", () =>
    pool.query<{
      id: string;
      at: Date;
      actor: string;
      command: string;
      target: string | null;
      outcome: string;
      before: unknown;
      after: unknown;
    }>(
      `select id::text as id, at, actor, command, target, outcome, before, after from admin_audit
       where ($1::timestamptz is null or at >= $1) order by at desc, id desc limit $2`,
      [options.since ?? null, options.limit ?? 100],
    ),
  );
  return result.rows.map((r) => ({ ...r, at: r.at.toISOString() }));
}
