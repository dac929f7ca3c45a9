/**
 * The connection pool, with a timeout on everything that can wait: acquiring a connection,
 * each statement (on the server and on the client, which also covers a dead network), an idle
 * transaction. A failed connection is dropped from the pool and a new one is opened on the next
 * request, so the stores recover by themselves when the database returns.
 */
import pg from "pg";

export interface PostgresPoolOptions {
  /** `postgres://user:password@host:port/database`; `?options=-c%20search_path%3Dname` selects a schema. */
  readonly connectionString: string;
  /** Most connections open at once. Default 10. */
  readonly max?: number | undefined;
  /** Time to get a connection (from the pool or a new one) before the request fails. Default 2000 ms. */
  readonly connectionTimeoutMs?: number | undefined;
  /** Time one statement may take, enforced by the server and by the client. Default 5000 ms. */
  readonly statementTimeoutMs?: number | undefined;
  /** An idle connection is closed after this long. Default 30000 ms. */
  readonly idleTimeoutMs?: number | undefined;
  /** Shown in `pg_stat_activity`. Default "partner-yield". */
  readonly applicationName?: string | undefined;
  /** Called with errors of idle connections (the pool has already dropped the connection). */
  readonly onIdleError?: ((error: Error) => void) | undefined;
}

/**
 * A `pg.Pool` with the timeouts above.
 * @example const pool = createPool({ connectionString: process.env.DATABASE_URL! });
 */
export function createPool(options: PostgresPoolOptions): pg.Pool {
  const statementTimeout = options.statementTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 2000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    statement_timeout: statementTimeout,
    // The client-side bound also ends a statement whose answer never comes (a dead network).
    query_timeout: statementTimeout + 1000,
    idle_in_transaction_session_timeout: statementTimeout * 2,
    application_name: options.applicationName ?? "partner-yield",
    keepAlive: true,
  });
  // An idle connection that breaks (the server restarts, the network drops) is removed by the pool;
  // without a listener, the 'error' event would end the process.
  pool.on("error", (error) => options.onIdleError?.(error));
  return pool;
}
