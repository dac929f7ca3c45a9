/**
 * A PostgreSQL database of a benchmark's own, shared by `bench:stores` and `bench:http`: created
 * through the admin URL (`PARTNER_YIELD_TEST_DATABASE_URL`, default
 * `postgres://postgres@127.0.0.1:5432/postgres`, as the tests use), migrated and loaded with the
 * repository's fixtures (what `partner-yield db migrate` + `db import` do), and dropped at the end
 * with `drop database … with (force)`, which also ends connections a server still holds.
 * @module
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { uniqueTag } from "../packages/core/src/testing/index.js";
import { loadFixtureDir } from "../packages/node-adapter/src/fixture-dir.js";
import { createPool, dataSetOf, importData, migrate } from "../packages/store-postgres/src/index.js";

/** The admin URL: a database the benchmark may connect to and create databases from. */
export const ADMIN_URL =
  process.env["PARTNER_YIELD_TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** The path of the `pg` module store-postgres uses, for a bench process that loads it by path. */
export const PG_MODULE = createRequire(
  fileURLToPath(new URL("../packages/store-postgres/package.json", import.meta.url)),
).resolve("pg");

/** How to get a PostgreSQL the benchmarks can use, for the error when there is none. */
export const HOW_TO_START_POSTGRES =
  "start it (where it is installed: `pg_ctlcluster 15 main start`, as .ci/run does; or " +
  "`docker run --rm -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`), or point " +
  "PARTNER_YIELD_TEST_DATABASE_URL at a server where this user may create databases";

/** PostgreSQL could not be reached (or refused to create the database) at the admin URL. */
export class PostgresUnreachableError extends Error {
  constructor(adminUrl: string, cause: unknown) {
    super(
      `PostgreSQL is not reachable at ${redacted(adminUrl)} (${(cause as Error)?.message ?? String(cause)}); ${HOW_TO_START_POSTGRES}`,
      { cause },
    );
    this.name = "PostgresUnreachableError";
  }
}

export interface BenchDatabase {
  /** `py_bench_<random>`. */
  readonly name: string;
  /** The admin URL with this database as its path: what `--database-url` is given. */
  readonly url: string;
  /** Drops the database (with force); safe to call more than once, and concurrently. */
  readonly drop: () => Promise<void>;
}

/** Databases created and not yet dropped (by any caller), for a signal handler. */
const live = new Set<BenchDatabase>();

/** Drops every database created here and not yet dropped: for a SIGINT/SIGTERM handler. */
export async function dropLiveDatabases(): Promise<void> {
  await Promise.all([...live].map((db) => db.drop()));
}

/**
 * Creates, migrates and fills (the fixtures) a database of its own; with `{ empty: true }` only
 * creates it (the caller migrates and fills it, e.g. with the built CLI: `bench/built-cli.ts`).
 * @throws PostgresUnreachableError when the admin URL does not answer.
 * @example const db = await createBenchDatabase(); try { … db.url … } finally { await db.drop(); }
 */
export async function createBenchDatabase(
  adminUrl: string = ADMIN_URL,
  options: { readonly empty?: boolean } = {},
): Promise<BenchDatabase> {
  const name = `py_bench_${uniqueTag()}`;
  const admin = createPool({ connectionString: adminUrl, max: 1, statementTimeoutMs: 60_000 });
  try {
    await admin.query(`create database ${name}`);
  } catch (error) {
    await admin.end().catch(() => {});
    throw new PostgresUnreachableError(adminUrl, error);
  }
  let dropping: Promise<void> | undefined;
  const drop = () => {
    dropping ??= admin
      .query(`drop database if exists ${name} with (force)`)
      .then(() => {
        live.delete(database);
      })
      .finally(() => admin.end().catch(() => {}));
    return dropping;
  };
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database: BenchDatabase = { name, url: url.toString(), drop };
  live.add(database);
  if (options.empty === true) return database;
  try {
    const pool = createPool({ connectionString: url.toString(), statementTimeoutMs: 60_000 });
    try {
      await migrate(pool);
      await importData(pool, dataSetOf(loadFixtureDir(FIXTURES)));
    } finally {
      await pool.end();
    }
  } catch (error) {
    await drop();
    throw error;
  }
  return database;
}

/** The URL without its password, for messages. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "(the admin URL)";
  }
}
