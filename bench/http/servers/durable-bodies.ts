/**
 * The durable bare server's store (the runner's `--durable-bare`): each POST's body is committed
 * to PostgreSQL before it is answered, in a table of the shape pgbench's insert uses (an identity
 * key and the body as text), with group commit as our event store does it: the bodies that arrive
 * while an insert is in flight go out together in the next one, at most 64 a statement, one
 * statement in flight, a lone body as soon as the current microtasks have run (the loop of
 * store-postgres's `PostgresEventStore#drain`, which this follows: change both together). No
 * idempotency key, no credential check, no jsonb: the least a node:http server on `pg` does to
 * make a body durable.
 * @module
 */
import { createRequire } from "node:module";
import type { DurableSpec } from "./common.js";

/** The table the bodies go to, in the bench's database (created here when missing). */
export const DURABLE_TABLE = "bench_bare_insert";
const MAX_BATCH = 64;
const INSERT = `insert into ${DURABLE_TABLE} (body) select unnest($1::text[])`;

interface Pool {
  query(config: string | { name: string; text: string; values: unknown[] }): Promise<unknown>;
  on(event: "error", listener: (error: Error) => void): void;
}

interface Pending {
  readonly body: string;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Connects (a pool of 10, as our server's default), creates the table, and returns the function
 * that commits one body: it resolves once the body's insert has committed.
 */
export async function durableBodies(spec: DurableSpec): Promise<(body: string) => Promise<void>> {
  const pg = createRequire(import.meta.url)(spec.pgModule) as { Pool: new (options: object) => Pool };
  const pool = new pg.Pool({ connectionString: spec.databaseUrl, max: 10 });
  // An idle connection that drops is replaced by the pool; the next insert fails on its own (503).
  pool.on("error", () => {});
  await pool.query(
    `create table if not exists ${DURABLE_TABLE} (id bigint generated always as identity primary key, body text not null)`,
  );
  let queue: Pending[] = [];
  let inFlight = false;
  let scheduled = false;

  const send = (): void => {
    scheduled = false;
    if (inFlight || queue.length === 0) return;
    const batch = queue.slice(0, MAX_BATCH);
    queue = queue.slice(MAX_BATCH);
    inFlight = true;
    Promise.resolve()
      .then(() => pool.query({ name: "bench-bare-insert", text: INSERT, values: [batch.map((p) => p.body)] }))
      .then(
        () => {
          for (const p of batch) p.resolve();
        },
        (error: unknown) => {
          for (const p of batch) p.reject(error);
        },
      )
      .finally(() => {
        inFlight = false;
        send();
      });
  };

  return (body) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ body, resolve, reject });
      if (!inFlight && !scheduled) {
        scheduled = true;
        queueMicrotask(send);
      }
    });
}
