/**
 * A PostgreSQL database of its own for each test file: created, migrated, dropped after the file's
 * tests (node:test's `after`). The server is the one of `ADMIN_URL`.
 */
import { after } from "node:test";
import pg from "pg";
import { createPool, migrate } from "../index.js";

/**
 * A superuser connection used to create and drop the test databases:
 * `PARTNER_YIELD_TEST_DATABASE_URL`, by default postgres@127.0.0.1:5432.
 */
export const ADMIN_URL =
  process.env["PARTNER_YIELD_TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  readonly name: string;
  /** Connection string of the test database. */
  readonly url: string;
  /** A pool on it, closed after the file's tests. */
  readonly pool: pg.Pool;
}

/** Why PostgreSQL is unreachable at ADMIN_URL, or undefined when it answers (within 3 s). */
export async function postgresReachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A new database named `<prefix><tag>_<random>` (prefix `py_stores_` unless given), migrated
 * unless `migrated` is false, dropped after the file's tests. Call it only when PostgreSQL
 * answers (`postgresReachable`, and `gate` of @partner-yield/node-adapter/testing).
 */
export async function testDatabase(
  tag: string,
  options: { migrated?: boolean; prefix?: string } = {},
): Promise<TestDatabase> {
  const name = `${options.prefix ?? "py_stores_"}${tag}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(name);
  const pool = createPool({
    connectionString: url,
    max: 20,
    statementTimeoutMs: 30_000,
    connectionTimeoutMs: 10_000,
  });
  if (options.migrated !== false) await migrate(pool);
  after(async () => {
    await pool.end().catch(() => undefined);
    await dropDatabase(name);
  });
  return { name, url, pool };
}

/** The connection string of database `name` on the server of ADMIN_URL. */
export function databaseUrl(name: string, host?: { host: string; port: number }): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  if (host !== undefined) {
    url.hostname = host.host;
    url.port = String(host.port);
  }
  return url.toString();
}

/** Drops database `name`, closing its connections first. */
export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}
