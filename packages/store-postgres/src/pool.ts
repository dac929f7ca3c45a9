/**
 * The connection pool, with a timeout on everything that can wait: acquiring a connection,
 * each statement (on the server and on the client, which also covers a dead network), an idle
 * transaction. A failed connection is dropped from the pool and a new one is opened on the next
 * request, so the stores recover by themselves when the database returns.
 */
import pg from "pg";

export interface PostgresPoolOptions {
  /** `postgres://user:password@host:port/database`. */
  readonly connectionString: string;
  /**
   * The PostgreSQL schema the tables live in (`search_path` of every connection, the read cache's
   * and the event consumers' listening ones included); default the database's own search path,
   * `public` on a stock server. `migrate` creates it when it is missing. A lowercase SQL
   * identifier: a letter or `_`, then letters, digits or `_`, at most 63 characters.
   */
  readonly schema?: string | undefined;
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
  const schema =
    options.schema === undefined ? undefined : checkedSchema(options.schema, options.connectionString);
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
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
  if (schema !== undefined) schemas.set(pool, schema);
  return pool;
}

/** The `schema` each pool of `createPool` was made with (`migrate` creates it). */
const schemas = new WeakMap<pg.Pool, string>();

/** The schema `createPool` gave this pool, if any. */
export function schemaOf(pool: pg.Pool): string | undefined {
  return schemas.get(pool);
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** @throws RangeError when `schema` is not a plain identifier, or the URL sets its own options. */
function checkedSchema(schema: string, connectionString: string): string {
  if (!IDENTIFIER.test(schema)) {
    throw new RangeError(
      `schema must be a lowercase SQL identifier (a letter or _, then letters, digits or _, at most 63), not ${JSON.stringify(schema)}`,
    );
  }
  if (/[?&]options=/.test(connectionString)) {
    throw new RangeError(
      "the connection string sets its own options (a search_path?) and schema is given: set the schema in one place",
    );
  }
  return schema;
}
