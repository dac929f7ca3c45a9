/**
 * Versioned schema migrations: numbered SQL files in `migrations/`, applied in order, each in its
 * own transaction, recorded in `schema_migrations` with a checksum and (from schema 5) its
 * `compatible_from` marker. Concurrent `migrate` calls (two instances starting together) are
 * serialised by an advisory lock.
 *
 * Expand/contract: a release's schema-code version is its highest migration. It runs on any schema
 * that holds all its migrations, unchanged, and whose further migrations (applied by newer
 * releases) each record `compatible_from` at or below its version: an additive migration keeps the
 * previous release running, so a rollback, a scale-up or a restart of an old instance works mid
 * deploy. It refuses a schema with pending migrations, one whose applied migrations differ from its
 * files, and one holding a newer migration that raised `compatible_from` above it (contracting).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";
import { guarded } from "./errors.js";
import { schemaOf } from "./pool.js";

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** SHA-256 of the file, hex. */
  readonly checksum: string;
  /**
   * The oldest schema-code version that can run on a schema including this migration: the
   * previous release's for an additive migration, its own version for a contracting one. The
   * file's `-- compatible_from: N` line; `version - 1` for 0001–0004, which predate the marker.
   */
  readonly compatibleFrom: number;
}

/** A migration the database holds and this code does not know: a newer release applied it. */
export interface NewerMigration {
  readonly version: number;
  readonly name: string;
  /** As recorded; undefined when the row has none (written by hand): then only its own version runs. */
  readonly compatibleFrom: number | undefined;
}

export interface SchemaStatus {
  /** Highest version applied to the database; 0 for an empty one. */
  readonly current: number;
  /** Highest version this code knows: its schema-code version. */
  readonly latest: number;
  /** Known migrations not applied yet. */
  readonly pending: readonly Migration[];
  /** Applied migrations this code does not know, every one compatible with it (else it throws). */
  readonly newer: readonly NewerMigration[];
  /**
   * The schema-code versions of the releases that run on this schema as it is, `oldest` to
   * `current` (a newer release needs `migrate` first). Releases before 5 read no marker and run
   * only on their own version, so `oldest` is at least 5 on a schema of 5 or more.
   */
  readonly supported: { readonly oldest: number; readonly newest: number };
}

export interface SchemaOptions {
  /**
   * The migrations of the code, in version order from 1 (default: `knownMigrations()`). Another
   * list stands for another release: a shorter one for an older release.
   */
  readonly migrations?: readonly Migration[] | undefined;
}

/** The schema cannot be used by this code; `message` says what to do. */
export class SchemaVersionError extends Error {
  override readonly name = "SchemaVersionError";
}

const MIGRATIONS_DIR = new URL("../migrations/", import.meta.url);
const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;
/** The line of a migration file that states its marker. */
const MARKER_LINE = /^-- compatible_from: (\d+)[ \t]*$/m;
/**
 * The migration that added `schema_migrations.compatible_from`: from it on, every file states its
 * marker; releases before it read no marker and refuse any schema newer than their own.
 */
const MARKERS_SINCE = 5;
/** Advisory lock key serialising migrations ("partner-yield migrate"). */
const MIGRATION_LOCK = 7_263_001;
/** The client-side bound for migration statements (pg treats 0 as "use the pool's"). */
const NO_LIMIT_MS = 86_400_000;

/** The migrations shipped with this package, in version order. */
export function knownMigrations(): readonly Migration[] {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => FILE_NAME.test(f))
    .sort();
  return files.map((file, i) => {
    const migration = parseMigration(file, readFileSync(new URL(file, MIGRATIONS_DIR), "utf8"));
    if (migration.version !== i + 1) throw new Error(`migrations/${file}: expected version ${i + 1}`);
    return migration;
  });
}

/**
 * A migration from its file name (`NNNN_name.sql`) and text: version, name, checksum and the
 * `-- compatible_from: N` marker, required from version 5 on, at most the version itself.
 * @throws Error for a bad file name or a missing or impossible marker.
 * @example parseMigration("0006_product_notes.sql", "-- compatible_from: 5\nalter table …").compatibleFrom; // 5
 */
export function parseMigration(file: string, sql: string): Migration {
  const parts = FILE_NAME.exec(file);
  if (parts === null) throw new Error(`migrations/${file}: expected NNNN_name.sql`);
  const version = Number(parts[1]);
  const marker = MARKER_LINE.exec(sql);
  if (marker === null && version >= MARKERS_SINCE)
    throw new Error(
      `migrations/${file}: no "-- compatible_from: N" line (the previous release's version if the migration is additive, ${version} if it contracts)`,
    );
  const compatibleFrom = marker === null ? version - 1 : Number(marker[1]);
  if (compatibleFrom > version)
    throw new Error(`migrations/${file}: compatible_from ${compatibleFrom} is above the migration's version`);
  const checksum = createHash("sha256").update(sql).digest("hex");
  return { version, name: parts[2]!, sql, checksum, compatibleFrom };
}

const CREATE_TABLE = `create table if not exists schema_migrations (
  version integer primary key,
  name text not null,
  checksum text not null,
  applied_at timestamptz not null default now()
)`;

/** Whether `schema_migrations` has the column of migration 0005 (a release must read both). */
const MARKERS_PRESENT = `exists (select 1 from pg_attribute
  where attrelid = to_regclass('schema_migrations') and attname = 'compatible_from' and not attisdropped)`;

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
  /** Null in a row recorded before migration 0005, or by hand. */
  compatible_from: number | null;
}

/** The recorded migrations (undefined before the first `migrate`), with markers when recorded. */
async function applied(client: pg.ClientBase | pg.Pool): Promise<AppliedRow[] | undefined> {
  const table = await client.query<{ present: boolean; markers: boolean }>(
    `select to_regclass('schema_migrations') is not null as present, ${MARKERS_PRESENT} as markers`,
  );
  if (!table.rows[0]?.present) return undefined;
  const rows = await client.query<AppliedRow>(
    `select version, name, checksum, ${table.rows[0].markers ? "compatible_from" : "null::integer as compatible_from"}
     from schema_migrations order by version`,
  );
  return rows.rows;
}

function compare(rows: readonly AppliedRow[], known: readonly Migration[]): SchemaStatus {
  known.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration list: expected version ${i + 1}, not ${m.version}`);
  });
  const latest = known.length;
  const current = rows.length === 0 ? 0 : rows[rows.length - 1]!.version;
  const supported = supportedReleases(rows, known, current);
  const newer = rows
    .filter((row) => row.version > latest)
    .map((row) => ({
      version: row.version,
      name: row.name,
      compatibleFrom: row.compatible_from ?? undefined,
    }));
  const blocking = newer.filter((m) => (m.compatibleFrom ?? m.version) > latest);
  if (blocking.length > 0) {
    const worst = blocking.reduce((a, b) =>
      (a.compatibleFrom ?? a.version) >= (b.compatibleFrom ?? b.version) ? a : b,
    );
    const needs =
      worst.compatibleFrom === undefined
        ? `records no compatible_from, so only schema-code version ${worst.version} runs on it`
        : `is not additive: it needs schema-code version ${worst.compatibleFrom} or later`;
    throw new SchemaVersionError(
      `the database schema is version ${current}, newer than this partner-yield knows (${latest}), and migration ${worst.version} (${worst.name}) ${needs}; ` +
        `this schema runs schema-code versions ${range(supported)}: upgrade partner-yield before starting it against this database`,
    );
  }
  for (const row of rows) {
    if (row.version > latest) continue;
    const migration = known[row.version - 1];
    if (migration === undefined || migration.checksum !== row.checksum) {
      throw new SchemaVersionError(
        `migration ${row.version} (${row.name}) applied to the database differs from migrations/${String(row.version).padStart(4, "0")}_${migration?.name ?? row.name}.sql of this partner-yield; ` +
          "the schema was changed by another version: restore a matching partner-yield",
      );
    }
  }
  const recorded = new Set(rows.map((row) => row.version));
  return { current, latest, pending: known.filter((m) => !recorded.has(m.version)), newer, supported };
}

/**
 * The releases that run on a schema: from the highest marker of its migrations (the recorded one,
 * else this code's, else the migration's own version) to its version; at least MARKERS_SINCE,
 * since the releases before it run on their own version only.
 */
function supportedReleases(
  rows: readonly AppliedRow[],
  known: readonly Migration[],
  current: number,
): SchemaStatus["supported"] {
  if (current < MARKERS_SINCE) return { oldest: current, newest: current };
  let oldest = MARKERS_SINCE;
  for (const row of rows)
    oldest = Math.max(oldest, row.compatible_from ?? known[row.version - 1]?.compatibleFrom ?? row.version);
  return { oldest: Math.min(oldest, current), newest: current };
}

/** "5 to 6", or "6 only". */
function range({ oldest, newest }: SchemaStatus["supported"]): string {
  return oldest === newest ? `${newest} only` : `${oldest} to ${newest}`;
}

/**
 * The schema version of the database against the migrations of this code (or of `options`).
 * @throws SchemaVersionError when the database's history differs, or it holds a newer migration
 *   this code cannot run on.
 * @throws StoreUnavailableError when the database cannot be reached.
 * @example const { current, supported } = await schemaStatus(pool); // 6, { oldest: 5, newest: 6 }
 */
export async function schemaStatus(pool: pg.Pool, options: SchemaOptions = {}): Promise<SchemaStatus> {
  const rows = await guarded("reading the schema version", () => applied(pool));
  return compare(rows ?? [], options.migrations ?? knownMigrations());
}

/**
 * Throws unless this code can run on the database's schema: all its migrations applied, unchanged,
 * and any newer one compatible (additive). What a server checks before it serves.
 * @throws SchemaVersionError otherwise, saying what to do.
 * @example await assertSchemaCurrent(pool); // also passes on the next release's additive schema
 */
export async function assertSchemaCurrent(pool: pg.Pool, options: SchemaOptions = {}): Promise<SchemaStatus> {
  const status = await schemaStatus(pool, options);
  if (status.pending.length > 0) {
    throw new SchemaVersionError(
      `the database schema is version ${status.current}; this partner-yield needs ${status.latest}: ` +
        "run `partner-yield db migrate` first",
    );
  }
  return status;
}

/**
 * Applies every pending migration, in order, each in one transaction with its marker; returns what
 * was applied. Safe to run from several processes at once, and again (it then applies nothing), and
 * by an older release on a newer schema it runs on (nothing to apply).
 * @throws SchemaVersionError when the schema is one this code cannot run on.
 * @example await migrate(pool); // [{ version: 1, name: "initial", … }] on an empty database
 */
export async function migrate(pool: pg.Pool, options: SchemaOptions = {}): Promise<readonly Migration[]> {
  const known = options.migrations ?? knownMigrations();
  const client = await guarded("connecting", () => pool.connect());
  let failed: unknown;
  try {
    // A migration (or waiting for another process's) may take longer than a request may.
    await client.query("set statement_timeout = 0");
    await client.query(unbounded("select pg_advisory_lock($1)", [MIGRATION_LOCK]));
    try {
      const schema = schemaOf(pool);
      // A checked identifier (createPool): quoting is enough.
      if (schema !== undefined) await client.query(`create schema if not exists "${schema}"`);
      await client.query(CREATE_TABLE);
      const { pending } = compare((await applied(client)) ?? [], known);
      for (const migration of pending) {
        await client.query("begin");
        try {
          await client.query(unbounded(migration.sql));
          // Before 0005 the table has no marker column; 0005 adds it in the same transaction.
          const markers = (await client.query<{ markers: boolean }>(`select ${MARKERS_PRESENT} as markers`))
            .rows[0]?.markers;
          await client.query(
            markers
              ? "insert into schema_migrations (version, name, checksum, compatible_from) values ($1, $2, $3, $4)"
              : "insert into schema_migrations (version, name, checksum) values ($1, $2, $3)",
            [
              migration.version,
              migration.name,
              migration.checksum,
              ...(markers ? [migration.compatibleFrom] : []),
            ],
          );
          await client.query("commit");
        } catch (error) {
          await client.query("rollback").catch(() => undefined);
          throw new Error(
            `migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`,
            {
              cause: error,
            },
          );
        }
      }
      return pending;
    } finally {
      await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
      await client.query("reset statement_timeout").catch(() => undefined);
    }
  } catch (error) {
    failed = error;
    throw error;
  } finally {
    client.release(failed instanceof SchemaVersionError ? undefined : (failed as Error | undefined));
  }
}

/** A statement without the pool's client-side timeout (`query_timeout` is missing from @types/pg). */
function unbounded(text: string, values: unknown[] = []): pg.QueryConfig {
  return { text, values, query_timeout: NO_LIMIT_MS } as pg.QueryConfig;
}
