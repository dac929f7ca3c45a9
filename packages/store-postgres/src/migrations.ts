/**
 * Versioned schema migrations: numbered SQL files in `migrations/`, applied in order, each in its
 * own transaction, recorded in `schema_migrations` with a checksum. Concurrent `migrate` calls
 * (two instances starting together) are serialised by an advisory lock. A database whose schema
 * is newer than this code, or whose applied migrations differ from the files, is refused.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";
import { guarded } from "./errors.js";

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** SHA-256 of the file, hex. */
  readonly checksum: string;
}

export interface SchemaStatus {
  /** Highest version applied to the database; 0 for an empty one. */
  readonly current: number;
  /** Highest version this code knows. */
  readonly latest: number;
  /** Known migrations not applied yet. */
  readonly pending: readonly Migration[];
}

/** The schema cannot be used by this code; `message` says what to do. */
export class SchemaVersionError extends Error {
  override readonly name = "SchemaVersionError";
}

const MIGRATIONS_DIR = new URL("../migrations/", import.meta.url);
const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;
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
    const [, version, name] = FILE_NAME.exec(file)!;
    if (Number(version) !== i + 1) throw new Error(`migrations/${file}: expected version ${i + 1}`);
    const sql = readFileSync(new URL(file, MIGRATIONS_DIR), "utf8");
    return { version: i + 1, name: name!, sql, checksum: createHash("sha256").update(sql).digest("hex") };
  });
}

const CREATE_TABLE = `create table if not exists schema_migrations (
  version integer primary key,
  name text not null,
  checksum text not null,
  applied_at timestamptz not null default now()
)`;

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

async function applied(client: pg.ClientBase | pg.Pool): Promise<AppliedRow[] | undefined> {
  const exists = await client.query<{ present: boolean }>(
    "select to_regclass('schema_migrations') is not null as present",
  );
  if (!exists.rows[0]?.present) return undefined;
  const rows = await client.query<AppliedRow>(
    "select version, name, checksum from schema_migrations order by version",
  );
  return rows.rows;
}

function compare(rows: readonly AppliedRow[], known: readonly Migration[]): SchemaStatus {
  const latest = known.length;
  const current = rows.length === 0 ? 0 : rows[rows.length - 1]!.version;
  if (current > latest) {
    throw new SchemaVersionError(
      `the database schema is version ${current}, newer than this partner-yield knows (${latest}); ` +
        "upgrade partner-yield before starting it against this database",
    );
  }
  for (const row of rows) {
    const migration = known[row.version - 1];
    if (migration === undefined || migration.checksum !== row.checksum) {
      throw new SchemaVersionError(
        `migration ${row.version} (${row.name}) applied to the database differs from migrations/${String(row.version).padStart(4, "0")}_${migration?.name ?? row.name}.sql of this partner-yield; ` +
          "the schema was changed by another version: restore a matching partner-yield",
      );
    }
  }
  return { current, latest, pending: known.slice(current) };
}

/**
 * The schema version of the database against the migrations of this code.
 * @throws SchemaVersionError when the database is newer or its history differs.
 * @throws StoreUnavailableError when the database cannot be reached.
 */
export async function schemaStatus(pool: pg.Pool): Promise<SchemaStatus> {
  const rows = await guarded("reading the schema version", () => applied(pool));
  return compare(rows ?? [], knownMigrations());
}

/**
 * Throws unless the database holds exactly the schema this code expects: what a server checks
 * before it serves.
 */
export async function assertSchemaCurrent(pool: pg.Pool): Promise<void> {
  const status = await schemaStatus(pool);
  if (status.pending.length > 0) {
    throw new SchemaVersionError(
      `the database schema is version ${status.current}; this partner-yield needs ${status.latest}: ` +
        "run `partner-yield db migrate` first",
    );
  }
}

/**
 * Applies every pending migration, in order, each in one transaction; returns what was applied.
 * Safe to run from several processes at once, and again (it then applies nothing).
 * @example await migrate(pool); // [{ version: 1, name: "initial", … }] on an empty database
 */
export async function migrate(pool: pg.Pool): Promise<readonly Migration[]> {
  const known = knownMigrations();
  const client = await guarded("connecting", () => pool.connect());
  let failed: unknown;
  try {
    // A migration (or waiting for another process's) may take longer than a request may.
    await client.query("set statement_timeout = 0");
    await client.query(unbounded("select pg_advisory_lock($1)", [MIGRATION_LOCK]));
    try {
      await client.query(CREATE_TABLE);
      const { pending } = compare((await applied(client)) ?? [], known);
      for (const migration of pending) {
        await client.query("begin");
        try {
          await client.query(unbounded(migration.sql));
          await client.query("insert into schema_migrations (version, name, checksum) values ($1, $2, $3)", [
            migration.version,
            migration.name,
            migration.checksum,
          ]);
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
