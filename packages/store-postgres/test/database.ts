/**
 * Test support: a PostgreSQL database of its own for each test file (created, migrated, dropped
 * after), and the rule for a machine without PostgreSQL — the tests are skipped with a loud notice,
 * except under CI=true, where they fail.
 */
import { after, describe, test } from "node:test";
import type { TestFunctions } from "@partner-yield/core/testing";
import pg from "pg";
import { createPool, migrate } from "../src/index.js";

/** A superuser connection used to create and drop the test databases. */
export const ADMIN_URL =
  process.env["PARTNER_YIELD_TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";

const HOW_TO_RUN =
  "start PostgreSQL (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) and Redis " +
  '(redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no), or point ' +
  "PARTNER_YIELD_TEST_DATABASE_URL (a superuser connection) and PARTNER_YIELD_TEST_REDIS_URL at yours, " +
  "then run the tests again (.ci/run starts both when they are down)";

export interface TestDatabase {
  readonly name: string;
  /** Connection string of the test database. */
  readonly url: string;
  /** A pool on it, closed after the file's tests. */
  readonly pool: pg.Pool;
}

/** Whether PostgreSQL answers at ADMIN_URL (within 3 s). */
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
 * A new database named `py_stores_<tag>_<random>`, migrated unless `migrated` is false, dropped
 * after the file's tests. Undefined when PostgreSQL is unreachable (see `gate`).
 */
export async function testDatabase(tag: string, options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `py_stores_${tag}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
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

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

/**
 * `describe` and `test` for tests that need PostgreSQL (and Redis, when `redis` says why it is
 * unreachable): the real ones when the services answer; otherwise each suite is skipped with the
 * reason, after a notice on stderr — or, under CI=true, one failing test says what is missing.
 */
export function gate(unreachable: Readonly<Record<string, string | undefined>>): TestFunctions & {
  readonly available: boolean;
} {
  const missing = Object.entries(unreachable).filter(([, why]) => why !== undefined);
  if (missing.length === 0) return { describe, test, available: true };
  const reason = missing.map(([service, why]) => `${service} is not reachable (${why})`).join("; ");
  if (process.env["CI"] === "true") {
    test(`required services (CI=true): ${reason}`, () => {
      throw new Error(`${reason}: under CI=true these tests must run; ${HOW_TO_RUN}`);
    });
  } else {
    test(`needs ${missing.map(([service]) => service).join(" and ")}`, {
      skip: `SKIPPED: ${reason}`,
    }, () => {});
    process.stderr.write(
      `\n${"!".repeat(100)}\n!! SKIPPED: ${reason}.\n!! These tests need the real services: ${HOW_TO_RUN}.\n${"!".repeat(100)}\n\n`,
    );
  }
  return {
    describe: (name, body) => describe(name, { skip: `SKIPPED: ${reason}` }, body),
    test: (name, body) => test(name, { skip: `SKIPPED: ${reason}` }, body),
    available: false,
  };
}
