/**
 * What recording `last_used_at` costs (not a test): API-key lookups per second against PostgreSQL,
 * 50 in flight over one pool of 10 connections (a server's default), for three designs:
 *
 *   throttled   PostgresKeyStore.findByHash as shipped: a read; `last_used_at` written at most
 *               once a minute per key and process, off the request's path
 *   every       the same read, then an UPDATE of `last_used_at` after every lookup (off the path)
 *   as-lookup   the lookup IS the write: UPDATE … SET last_used_at = now() … RETURNING
 *
 * each with one key (a partner's only key: every request on one row) and with 100 keys. Prints
 * lookups per second, p50/p99 latency, the ratio to `throttled`, and the rows updated (from
 * pg_stat_user_tables, read after the pool closed so every backend flushed its counts).
 *
 *   pnpm bench:last-used                    # needs PostgreSQL (as the tests do); ~5 s per case
 *   BENCH_SECONDS=10 pnpm bench:last-used
 *
 * The run uses a database of its own (py_keys_bench_…), dropped at the end.
 */
import { hashApiKey } from "../packages/core/src/index.js";
import {
  createPool,
  migrate,
  PostgresKeyStore,
  PostgresPartnerAdmin,
} from "../packages/store-postgres/src/index.js";
import { parseFlags } from "./cli-flags.js";

parseFlags(
  "bench:last-used",
  `pnpm bench:last-used

API-key lookups per second against PostgreSQL (50 in flight, a pool of 10) for three ways of
recording last_used_at (throttled as shipped, a write after every lookup, the lookup as the
write), with one key and with 100 keys; lookups/s, p50/p99, the ratio to throttled and the rows
updated. Takes no flags. Environment: BENCH_SECONDS (default 5 a case),
PARTNER_YIELD_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres).
`,
  {},
);

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "5");
const IN_FLIGHT = 50;
const ADMIN_URL =
  process.env["PARTNER_YIELD_TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";

type Pool = ReturnType<typeof createPool>;
type Lookup = (pool: Pool, keyHash: string) => Promise<unknown>;

const designs: Record<string, () => Lookup> = {
  throttled: () => {
    let store: PostgresKeyStore | undefined;
    return async (pool, keyHash) => {
      store ??= new PostgresKeyStore(pool);
      return store.findByHash(keyHash);
    };
  },
  every: () => async (pool, keyHash) => {
    const row = await pool.query(
      "select id, partner_id, environment, status from api_keys where key_hash = $1",
      [keyHash],
    );
    pool
      .query("update api_keys set last_used_at = now() where key_hash = $1", [keyHash])
      .catch(() => undefined);
    return row.rows[0];
  },
  "as-lookup": () => async (pool, keyHash) =>
    (
      await pool.query(
        "update api_keys set last_used_at = now() where key_hash = $1 returning id, partner_id, environment, status",
        [keyHash],
      )
    ).rows[0],
};

async function run(url: string, hashes: readonly string[], design: string) {
  const pool = createPool({ connectionString: url, max: 10 });
  const lookup = designs[design]!();
  const before = await updates(url);
  const latencies: number[] = [];
  let i = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < until) {
        const start = performance.now();
        await lookup(pool, hashes[i++ % hashes.length]!);
        latencies.push(performance.now() - start);
      }
    }),
  );
  // Let the fire-and-forget writes finish, then close: each backend flushes its statistics on exit.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await pool.end();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  latencies.sort((a, b) => a - b);
  return {
    perSecond: latencies.length / SECONDS,
    p50: latencies[Math.floor(latencies.length * 0.5)]!,
    p99: latencies[Math.floor(latencies.length * 0.99)]!,
    updated: (await updates(url)) - before,
  };
}

async function updates(url: string): Promise<number> {
  const pool = createPool({ connectionString: url, max: 1 });
  try {
    const row = await pool.query<{ n: string }>(
      "select coalesce(n_tup_upd, 0) as n from pg_stat_user_tables where relname = 'api_keys'",
    );
    return Number(row.rows[0]?.n ?? 0);
  } finally {
    await pool.end();
  }
}

async function main(): Promise<void> {
  const name = `py_keys_bench_${process.pid}`;
  const admin = createPool({ connectionString: ADMIN_URL, max: 1, statementTimeoutMs: 60_000 });
  await admin.query(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    const pool = createPool({ connectionString: url.toString() });
    await migrate(pool);
    const partners = new PostgresPartnerAdmin(pool);
    await partners.addPartner({ id: "bench", name: "Bench" });
    const hashes: string[] = [];
    for (let k = 0; k < 100; k++) {
      const issued = await partners.createKey({ partnerId: "bench", environment: "sandbox" });
      if (!issued.ok) throw new Error(issued.reason);
      hashes.push(hashApiKey(issued.value.apiKey));
    }
    await pool.end();
    console.log(
      `API-key lookups, ${IN_FLIGHT} in flight, pool of 10, ${SECONDS} s per case (PostgreSQL ${url.host})`,
    );
    console.log("design      keys  lookups/s  vs throttled  p50 ms  p99 ms  rows updated");
    for (const keyCount of [1, 100]) {
      let baseline = 0;
      for (const design of Object.keys(designs)) {
        const r = await run(url.toString(), hashes.slice(0, keyCount), design);
        if (design === "throttled") baseline = r.perSecond;
        console.log(
          `${design.padEnd(10)}  ${String(keyCount).padStart(4)}  ${r.perSecond.toFixed(0).padStart(9)}  ${(r.perSecond / baseline).toFixed(2).padStart(11)}×  ${r.p50.toFixed(2).padStart(6)}  ${r.p99.toFixed(2).padStart(6)}  ${String(r.updated).padStart(12)}`,
        );
      }
    }
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

await main();
