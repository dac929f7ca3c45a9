/**
 * PostgreSQL's own yardsticks for `bench:http`'s PostgreSQL rows, measured with `pgbench` on the
 * same machine and the bench's own database: a prepared key lookup on our `api_keys` table (the
 * statement `PostgresKeyStore.findByHash` sends, for the demo key), a single-row insert with
 * its commit into a scratch table (a 1 KiB text, about the signed event's body), the same insert
 * without the flush wait, and our event row inserted one a transaction. Each run's
 * percentiles come from pgbench's per-transaction log (`-l`), exact as the HTTP rows' are.
 * @module
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPool } from "../../packages/store-postgres/src/index.js";
import { findTool } from "../find-tool.js";

/** What to install where pgbench is missing. */
export const PGBENCH_INSTALL_HINT =
  "pgbench comes with PostgreSQL: on Debian/Ubuntu `apt-get install postgresql-contrib` (pgbench is in " +
  "the server package postgresql-NN, e.g. postgresql-15 on Debian 12; /usr/bin/pgbench is the " +
  "postgresql-client-common wrapper), on Alpine `apk add postgresql-contrib`, on macOS " +
  "`brew install postgresql`; or put a pgbench on PATH (PGBENCH=/path/to/pgbench)";

/** pgbench ran but failed (exit status, or output this code cannot read). */
export class PgbenchError extends Error {
  readonly code = "pgbench_failed";
  constructor(detail: string) {
    super(`pgbench failed: ${detail}`);
    this.name = "PgbenchError";
  }
}

/**
 * The pgbench to run (`PGBENCH`, else `pgbench` on PATH) when it answers `--version`; undefined
 * otherwise.
 * @example const bin = findPgbench() ?? fail(PGBENCH_INSTALL_HINT);
 */
export function findPgbench(): string | undefined {
  return findTool("PGBENCH", "pgbench");
}

/** One workload: a script of one transaction, its variables and what it needs created first. */
export interface PgbenchWorkload {
  /** Short name: log file prefix. */
  readonly name: "lookup" | "insert" | "insert-no-flush" | "event-insert";
  /** The row's label in the table. */
  readonly label: string;
  readonly script: string;
  /** `-D name=value` pairs. */
  readonly defines: Readonly<Record<string, string>>;
  /** SQL run once before the first run (the scratch table). */
  readonly setup?: string;
  /** Settings for pgbench's sessions, as `PGOPTIONS` (`-c name=value ...`). */
  readonly sessionOptions?: string;
}

/**
 * The key lookup: the key store's statement, prepared (`-M prepared`), for the SHA-256 of `apiKey`.
 * @example pgbench.run(keyLookup(DEMO.sandboxApiKey, 16), 6)
 */
export function keyLookup(apiKey: string, clients: number): PgbenchWorkload {
  return {
    name: "lookup",
    label: `pgbench: prepared key lookup (api_keys), ${clients} clients`,
    script:
      "select id::text as id, partner_id, environment, status, label from api_keys where key_hash = :keyhash;\n",
    defines: { keyhash: createHash("sha256").update(apiKey).digest("hex") },
  };
}

/**
 * The single-row insert: one `insert` of a 1 KiB text into a scratch table, each its own
 * transaction (autocommit: the insert and its commit, flushed as the server's events are).
 * @example pgbench.run(singleInsert(16), 6)
 */
export function singleInsert(clients: number): PgbenchWorkload {
  return {
    name: "insert",
    label: `pgbench: single-row insert + commit, ${clients} clients`,
    script: "insert into bench_pgbench_insert (body) values (:body);\n",
    defines: { body: "x".repeat(1024) },
    setup:
      "create table if not exists bench_pgbench_insert (id bigint generated always as identity primary key, body text not null)",
  };
}

/**
 * The single-row insert with `synchronous_commit = off`: the same statement, but a commit returns
 * before its WAL reaches the disk (not durable). Beside the durable insert it shows how much of
 * that yardstick is the wait for the disk's flush, which moves with the machine's storage rather
 * than its CPU: the durable insert pays one flush per commit (shared only between commits that
 * happen to wait together), where the event store shares one flush between the events of a batch.
 * No target is judged against it.
 * @example pgbench.run(insertWithoutFlush(16), 6)
 */
export function insertWithoutFlush(clients: number): PgbenchWorkload {
  return {
    ...singleInsert(clients),
    name: "insert-no-flush",
    label: `pgbench: the same insert, synchronous_commit off (not durable), ${clients} clients`,
    sessionOptions: "-c synchronous_commit=off",
  };
}

/**
 * Our event row, one a transaction: the event store's insert function (migration 0010's
 * `partner_yield_append_events`, as `PostgresEventStore` calls it) with one event, `data` taken
 * from `body` in PostgreSQL, the key and the signing secret checked as the server's insert checks
 * them (the demo's, from the fixtures: a database without them gets no row, each call answering
 * with the refused credential). A fresh idempotency key each transaction (a random 53-bit number:
 * a repeat is an ON CONFLICT skip, not an error). Beside `singleInsert`, whose row is one 1 KiB
 * text under one index, it shows what PostgreSQL's durable single-row commits reach with our row
 * (two copies of the event, text and jsonb; three indexes; ON CONFLICT). No target is judged
 * against it.
 * @example pgbench.run(eventInsert(16, body, DEMO_CREDENTIALS), 6)
 */
export function eventInsert(clients: number, body: string, credentials: EventCredentials): PgbenchWorkload {
  const array = (expression: string) => `array[${expression}]`;
  const args = [
    array(":partner::text"),
    array("'sandbox'::text"),
    array("('pgbench-' || :k)::text"),
    array(":fingerprint::text"),
    array(":eventtype::text"),
    array(":occurredat::text"),
    array("null::text"),
    array("true"),
    array(":body::text"),
    array("now()"),
    array(":keyhash::text"),
    array(":secretsha::text"),
  ];
  const event = JSON.parse(body) as { event_type: string; occurred_at: string };
  const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
  return {
    name: "event-insert",
    label: `pgbench: our event row, one a transaction (the event store's insert function), ${clients} clients`,
    script: `\\set k random(1, 9007199254740991)\nselect * from partner_yield_append_events(${args.join(", ")});\n`,
    defines: {
      partner: credentials.partnerId,
      fingerprint: sha256(body),
      eventtype: event.event_type,
      occurredat: event.occurred_at,
      body,
      keyhash: sha256(credentials.sandboxApiKey),
      secretsha: sha256(credentials.signingSecret),
    },
  };
}

/** The sandbox partner whose key and signing secret `eventInsert` presents. */
export interface EventCredentials {
  readonly partnerId: string;
  readonly sandboxApiKey: string;
  readonly signingSecret: string;
}

/**
 * How many events `eventInsert` has stored in the database at `url`: a run that stored none had
 * every call refused (the credentials are not in the database), and measured a refusal instead.
 * @example if ((await eventInsertsStored(url)) === 0) throw new Error("refused");
 */
export async function eventInsertsStored(url: string): Promise<number> {
  const pool = createPool({ connectionString: url, max: 1, statementTimeoutMs: 60_000 });
  try {
    const result = await pool.query<{ n: number }>(
      "select count(*)::int as n from events where idempotency_key like 'pgbench-%'",
    );
    return result.rows[0]!.n;
  } finally {
    await pool.end();
  }
}

/**
 * Creates what the workloads need (their `setup`) in the database at `url`.
 * @example await setUpWorkloads(database.url, [singleInsert(16)]);
 */
export async function setUpWorkloads(url: string, workloads: readonly PgbenchWorkload[]): Promise<void> {
  const pool = createPool({ connectionString: url, max: 1, statementTimeoutMs: 60_000 });
  try {
    for (const w of workloads) if (w.setup !== undefined) await pool.query(w.setup);
  } finally {
    await pool.end();
  }
}

/** One pgbench run's figures. */
export interface PgbenchResult {
  /** Transactions completed (lines of the per-transaction log). */
  readonly total: number;
  /** pgbench's tps without the initial connection time. */
  readonly tps: number;
  /** Percentiles by nearest rank over every transaction's latency, ms. */
  readonly p50: number;
  readonly p99: number;
  /** Failed transactions (pgbench 15+ reports them; 0 before). */
  readonly failed: number;
}

/**
 * Runs `workload` for `seconds` on the database at `url` with `clients` connections (threads: at
 * most 2, this machine's cores, and never more than the clients).
 * @throws PgbenchError when pgbench exits non-zero or prints no tps.
 * @example const r = await runPgbench("pgbench", url, keyLookup(key, 16), 16, 6);
 */
export async function runPgbench(
  bin: string,
  url: string,
  workload: PgbenchWorkload,
  clients: number,
  seconds: number,
): Promise<PgbenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "py-pgbench-"));
  try {
    const script = join(dir, `${workload.name}.sql`);
    writeFileSync(script, workload.script);
    const args = [
      "--no-vacuum",
      "--protocol=prepared",
      `--client=${clients}`,
      `--jobs=${Math.min(2, clients)}`,
      `--time=${seconds}`,
      `--file=${script}`,
      "--log",
      `--log-prefix=${join(dir, "log")}`,
      ...Object.entries(workload.defines).map(([k, v]) => `--define=${k}=${v}`),
      url,
    ];
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        bin,
        args,
        {
          timeout: (seconds + 60) * 1000,
          maxBuffer: 4 * 1024 * 1024,
          env:
            workload.sessionOptions === undefined
              ? process.env
              : { ...process.env, PGOPTIONS: workload.sessionOptions },
        },
        (error, out, err) => {
          if (error === null) resolve(out);
          else reject(new PgbenchError(`${error.code ?? error.signal}: ${err.trim() || out.trim()}`));
        },
      );
    });
    const tps = /^tps = ([\d.]+) \(without initial connection time\)/m.exec(stdout);
    if (tps === null) throw new PgbenchError(`no tps in its output:\n${stdout}`);
    const failed = /^number of failed transactions: (\d+)/m.exec(stdout);
    const times: number[] = [];
    for (const file of readdirSync(dir).filter((f) => f.startsWith("log."))) {
      for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
        // client_id transaction_no time_us script_no epoch_s epoch_us
        const micros = line.split(" ")[2];
        if (micros !== undefined) times.push(Number(micros) / 1000);
      }
    }
    times.sort((a, b) => a - b);
    const rank = (p: number) => (times.length === 0 ? 0 : times[Math.ceil((p / 100) * times.length) - 1]!);
    return {
      total: times.length,
      tps: Number(tps[1]),
      p50: rank(50),
      p99: rank(99),
      failed: failed === null ? 0 : Number(failed[1]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
