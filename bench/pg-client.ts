/**
 * `pnpm bench:pg-client`: the PostgreSQL clients side by side on this project's own statements,
 * to choose the driver by measurement (issue 28): `pg` (what store-postgres uses), `postgres`
 * (porsager) and `pg` with `pg-native` (libpq). Each runs the store's key lookup and its event
 * insert (a batch of events through `unnest`, `ON CONFLICT DO NOTHING RETURNING`) on a database
 * of this run's own, in alternating rounds; the figures are the node process's CPU per operation
 * (what a client costs the server) and operations per second. `--help` lists the flags.
 * @module
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { hashApiKey } from "../packages/core/src/index.js";
import { intFlagOf, parseFlags, usageError } from "./cli-flags.js";
import { pgCpuReader, pgCpuSince } from "./http/pg-cpu.js";
import {
  ADMIN_URL,
  createBenchDatabase,
  dropLiveDatabases,
  PostgresUnreachableError,
} from "./pg-database.js";

const HELP = `pnpm bench:pg-client [flags]

The PostgreSQL clients on this project's statements, on a database of this run's own (created,
migrated, filled with the fixtures, dropped at the end; PARTNER_YIELD_TEST_DATABASE_URL as the
tests use): the key lookup of PostgresKeyStore (a prepared SELECT by key hash, 16 at once) and
an event insert like PostgresEventStore's (a batch of 1 KiB events through unnest, ON CONFLICT
DO NOTHING RETURNING, 2 batches at once). Rounds alternate between the clients; each row gives
the median of the rounds: operations/s, the node process's CPU per operation (user + system,
from process.cpuUsage) and PostgreSQL's backends' CPU per operation (from /proc).

Clients: pg (this repository's own). postgres (porsager) and pg-native are not dependencies of
the project: install them in a directory of your own and name it with --module-dir, e.g.
  mkdir /tmp/pgc && cd /tmp/pgc && npm init -y && npm install pg@8 postgres@3 pg-native@3
(pg-native builds libpq's binding: Debian's libpq-dev, python3, make and g++). A client that
cannot be loaded is left out with a notice.

  --module-dir dir  where postgres and pg-native are installed (a directory with node_modules)
  --rounds n        alternating rounds (default 3)
  --lookups n       key lookups per client per round (default 20000)
  --batches n       insert batches per client per round (default 400)
  --batch n         events per insert batch (default 25)
  --storage         then, with pg only, the same inserts into copies of the events table stored
                    three ways, in alternating rounds: as it is (data as jsonb, the defaults'
                    compression), without data (null: only the signed body is kept), and with
                    lz4 compression on data and raw_body: what each costs PostgreSQL an event
`;

const flags = parseFlags("bench:pg-client", HELP, {
  "module-dir": { type: "string" },
  rounds: { type: "string" },
  lookups: { type: "string" },
  batches: { type: "string" },
  batch: { type: "string" },
  storage: { type: "boolean" },
});
const intFlag = intFlagOf("bench:pg-client");
const ROUNDS = intFlag("rounds", flags.rounds, 3, 1, 50);
const LOOKUPS = intFlag("lookups", flags.lookups, 20_000, 100, 10_000_000);
const BATCHES = intFlag("batches", flags.batches, 400, 10, 1_000_000);
const BATCH = intFlag("batch", flags.batch, 25, 1, 1000);
const LOOKUP_CONCURRENCY = 16;
const INSERT_CONCURRENCY = 2;

const LOOKUP =
  "select id::text as id, partner_id, environment, status, label from api_keys where key_hash = $1";
/** The event insert into `table` (the events table or a copy of it). */
const insertInto = (
  table: string,
) => `insert into ${table} (partner_id, environment, idempotency_key, fingerprint, event_type,
  occurred_at, data, raw_body, received_at)
select partner_id, environment, idempotency_key, fingerprint, event_type, occurred_at, data::jsonb,
  raw_body, received_at
from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::text[], $9::timestamptz[]) with ordinality
  as input(partner_id, environment, idempotency_key, fingerprint, event_type, occurred_at, data,
    raw_body, received_at, n)
order by n
on conflict (partner_id, environment, idempotency_key) do nothing
returning id::text as id, partner_id, environment, idempotency_key`;
const INSERT = insertInto("events");

/** The storage variants of `--storage`: how a copy of the events table is altered. */
const STORAGE_VARIANTS: Readonly<Record<string, { readonly alter: string; readonly withData: boolean }>> = {
  "as it is (data jsonb)": { alter: "", withData: true },
  "data null (the signed body only)": { alter: "", withData: false },
  "lz4 on data and raw_body": {
    alter: "alter table T alter column data set compression lz4, alter column raw_body set compression lz4",
    withData: true,
  },
};

/** One client under test: a prepared query and an end. */
interface Client {
  readonly name: string;
  readonly query: (name: string, text: string, values: unknown[]) => Promise<unknown>;
  readonly end: () => Promise<void>;
}

/** What is used of `pg` (loaded with require: it is store-postgres's dependency, not the root's). */
interface PgPool {
  on(event: "error", listener: (error: Error) => void): unknown;
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
  end(): Promise<void>;
}
type PgPoolClass = new (options: { connectionString: string; max: number }) => PgPool;
interface PgModule {
  readonly Pool: PgPoolClass;
  readonly native?: { readonly Pool: PgPoolClass } | null;
}

async function clients(url: string): Promise<Client[]> {
  const list: Client[] = [];
  const pgOf = (mod: PgModule, name: string, native: boolean): Client => {
    const PoolClass = native ? mod.native?.Pool : mod.Pool;
    if (PoolClass === undefined) throw new Error("pg.native is not available");
    const pool = new PoolClass({ connectionString: url, max: LOOKUP_CONCURRENCY });
    // The database is dropped (with force) at the end: a connection still closing may hear it.
    pool.on("error", () => {});
    return {
      name,
      query: (n, text, values) => pool.query({ name: n, text, values }),
      end: () => pool.end(),
    };
  };
  // pg is store-postgres's dependency, not the root's: loaded from there.
  const ownRequire = createRequire(new URL("../packages/store-postgres/package.json", import.meta.url));
  list.push(pgOf(ownRequire("pg") as PgModule, "pg (JavaScript)", false));
  const dir = flags["module-dir"];
  if (dir === undefined) {
    console.log("postgres and pg-native: left out (no --module-dir; see --help)");
    return list;
  }
  const require = createRequire(join(resolve(dir), "noop.js"));
  try {
    const postgres = require("postgres") as (url: string, options: object) => PostgresSql;
    const sql = postgres(url, { max: LOOKUP_CONCURRENCY, prepare: true, onnotice: () => {} });
    list.push({
      name: "postgres (porsager)",
      query: (_n, text, values) => sql.unsafe(text, values, { prepare: true }),
      end: () => sql.end(),
    });
  } catch (error) {
    console.log(`postgres: left out (${(error as Error).message.split("\n")[0]})`);
  }
  try {
    list.push(pgOf(require("pg") as PgModule, "pg + pg-native (libpq)", true));
  } catch (error) {
    console.log(`pg-native: left out (${(error as Error).message.split("\n")[0]})`);
  }
  return list;
}

interface PostgresSql {
  unsafe(text: string, values: unknown[], options: { prepare: boolean }): Promise<unknown>;
  end(): Promise<void>;
}

interface Figures {
  readonly perSecond: number;
  readonly cpuMicros: number;
  readonly pgMicros: number | undefined;
}

async function timed(
  ops: number,
  concurrency: number,
  one: (i: number) => Promise<unknown>,
  pgCpu: (() => ReturnType<NonNullable<ReturnType<typeof pgCpuReader>>>) | undefined,
  perOp: number,
): Promise<Figures> {
  const pgBefore = pgCpu?.();
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ops) await one(next++);
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const units = ops * perOp;
  const pgAfter = pgCpu?.();
  return {
    perSecond: units / seconds,
    cpuMicros: (cpu.user + cpu.system) / units,
    pgMicros: pgBefore && pgAfter ? pgCpuSince(pgBefore, pgAfter).own / units : undefined,
  };
}

function eventBatch(round: string, b: number): unknown[] {
  const columns: string[][] = Array.from({ length: 9 }, () => []);
  const body = JSON.stringify({ type: "user.created", data: { note: "x".repeat(900) } });
  for (let i = 0; i < BATCH; i++) {
    const row = [
      "demo-wallet",
      "sandbox",
      `${round}-${b}-${i}`,
      randomBytes(32).toString("hex"),
      "user.created",
      "2026-11-27T10:00:00Z",
      JSON.stringify({ note: "x".repeat(900) }),
      body,
      new Date().toISOString(),
    ];
    for (const [c, v] of row.entries()) columns[c]?.push(v);
  }
  return columns;
}

/** `--storage`: the same inserts into copies of the events table stored in other ways. */
async function storage(
  client: Client,
  partnerId: string,
  pgCpu: ReturnType<typeof pgCpuReader>,
): Promise<void> {
  const names = Object.keys(STORAGE_VARIANTS);
  const tables = new Map(names.map((name, i) => [name, `bench_events_${i}`]));
  for (const [name, table] of tables) {
    await client.query(`create-${table}`, `create table ${table} (like events including all)`, []);
    const { alter } = STORAGE_VARIANTS[name]!;
    if (alter !== "") await client.query(`alter-${table}`, alter.replace("T", table), []);
  }
  const figures = new Map<string, Figures[]>(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const table = tables.get(name)!;
      const batches = Array.from({ length: BATCHES }, (_, b) => eventBatch(`s${round}`, b));
      const insert = await timed(
        BATCHES,
        INSERT_CONCURRENCY,
        (i) => {
          const columns = (batches[i] as string[][]).map((col, k) =>
            k === 0
              ? col.map(() => partnerId)
              : k === 6 && !STORAGE_VARIANTS[name]!.withData
                ? col.map(() => null)
                : col,
          );
          return client.query(`insert-${table}`, insertInto(table), columns);
        },
        pgCpu,
        BATCH,
      );
      figures.get(name)?.push(insert);
      process.stderr.write(
        `storage round ${round + 1}/${ROUNDS} ${name}: ${Math.round(insert.perSecond)} events/s\n`,
      );
    }
  }
  console.log(
    `\n--storage: ${client.name}, the same inserts into copies of the events table; medians of ${ROUNDS} rounds\n`,
  );
  console.log(
    "| events stored | events/s | node CPU µs/event | PostgreSQL CPU µs/event | table size after (MiB) |",
  );
  console.log("|---|---:|---:|---:|---:|");
  for (const [name, xs] of figures) {
    const size = (await client.query(
      `size-${name}`,
      "select pg_total_relation_size($1::regclass)::text as bytes",
      [tables.get(name)],
    )) as { rows: { bytes: string }[] };
    const mib = Number(size.rows[0]?.bytes ?? Number.NaN) / 2 ** 20;
    console.log(
      `| ${name} | ${fmt(xs, (x) => x.perSecond, 0)} | ${fmt(xs, (x) => x.cpuMicros, 1)} | ${fmt(xs, (x) => x.pgMicros, 1)} | ${mib.toFixed(1)} |`,
    );
  }
}

/** The median of the figures `f` picks, to `digits` ("–" when none was measured). */
function fmt(xs: Figures[], f: (x: Figures) => number | undefined, digits: number): string {
  const vs = xs.map(f).filter((v): v is number => v !== undefined);
  return vs.length === 0 ? "–" : median(vs).toFixed(digits);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  let db: Awaited<ReturnType<typeof createBenchDatabase>>;
  try {
    db = await createBenchDatabase(ADMIN_URL);
  } catch (error) {
    if (error instanceof PostgresUnreachableError) usageError("bench:pg-client", error.message);
    throw error;
  }
  process.once("SIGINT", () => void dropLiveDatabases().finally(() => process.exit(130)));
  const pgCpu = pgCpuReader(db.name);
  const list = await clients(db.url);
  try {
    const partner = (await list[0]?.query("partner", "select partner_id from api_keys limit 1", [])) as {
      rows: { partner_id: string }[];
    };
    const partnerId = partner.rows[0]?.partner_id;
    if (partnerId === undefined) throw new Error("the fixtures hold no API key");
    // Hashes of keys that exist and of keys that do not, as a server sees both.
    const hashes = ["ypk_test_demo_wallet_0000000000000000", "nope"].map((k) => hashApiKey(k));
    const real = (await list[0]?.query("hashes", "select key_hash from api_keys", [])) as {
      rows: { key_hash: string }[];
    };
    hashes.push(...real.rows.map((r) => r.key_hash));
    const results = new Map<string, { lookup: Figures[]; insert: Figures[] }>();
    for (const c of list) results.set(c.name, { lookup: [], insert: [] });
    for (const c of list) {
      // Warm-up: connections open, statements prepared, code optimised.
      await timed(
        2000,
        LOOKUP_CONCURRENCY,
        (i) => c.query("lookup", LOOKUP, [hashes[i % hashes.length]]),
        undefined,
        1,
      );
    }
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? list : [...list].reverse();
      for (const c of order) {
        const r = results.get(c.name);
        const lookup = await timed(
          LOOKUPS,
          LOOKUP_CONCURRENCY,
          (i) => c.query("lookup", LOOKUP, [hashes[i % hashes.length]]),
          pgCpu,
          1,
        );
        const tag = `${round}-${c.name.split(" ")[0]}-${randomBytes(4).toString("hex")}`;
        const batches = Array.from({ length: BATCHES }, (_, b) => eventBatch(tag, b));
        const insert = await timed(
          BATCHES,
          INSERT_CONCURRENCY,
          (i) =>
            c.query(
              "insert",
              INSERT,
              (batches[i] as string[][]).map((col, k) => (k === 0 ? col.map(() => partnerId) : col)),
            ),
          pgCpu,
          BATCH,
        );
        r?.lookup.push(lookup);
        r?.insert.push(insert);
        process.stderr.write(
          `round ${round + 1}/${ROUNDS} ${c.name}: ${Math.round(lookup.perSecond)} lookups/s, ${Math.round(insert.perSecond)} events/s\n`,
        );
      }
    }
    console.log(
      `\n${ROUNDS} alternating rounds; lookups: ${LOOKUPS} a round, ${LOOKUP_CONCURRENCY} at once; inserts: ${BATCHES} batches of ${BATCH} events a round, ${INSERT_CONCURRENCY} at once; medians of the rounds\n`,
    );
    console.log(
      "| client | lookups/s | node CPU µs/lookup | PostgreSQL CPU µs/lookup | events/s | node CPU µs/event | PostgreSQL CPU µs/event |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    for (const [name, r] of results) {
      console.log(
        `| ${name} | ${fmt(r.lookup, (x) => x.perSecond, 0)} | ${fmt(r.lookup, (x) => x.cpuMicros, 1)} | ${fmt(r.lookup, (x) => x.pgMicros, 1)} | ${fmt(r.insert, (x) => x.perSecond, 0)} | ${fmt(r.insert, (x) => x.cpuMicros, 1)} | ${fmt(r.insert, (x) => x.pgMicros, 1)} |`,
      );
    }
    if (flags.storage === true && list[0] !== undefined) await storage(list[0], partnerId, pgCpu);
  } finally {
    await Promise.all(list.map((c) => c.end().catch(() => {})));
    await db.drop();
  }
}

await main();
