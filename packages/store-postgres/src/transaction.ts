/**
 * One transaction on a client of the pool, the same way everywhere in this package.
 * @module
 */
import type pg from "pg";
import { guarded } from "./errors.js";

/**
 * Runs `body` between `begin` and `commit` on one client of `pool`. When anything in it throws,
 * the transaction is rolled back, the client is discarded rather than reused, and what was thrown
 * is thrown again as it is. Connecting fails with `StoreUnavailableError`.
 * @example const n = await inTransaction(pool, async (client) => (await client.query("select 1")).rowCount);
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await guarded("connecting", () => pool.connect());
  let failure: Error | undefined;
  try {
    await client.query("begin");
    const outcome = await body(client);
    await client.query("commit");
    return outcome;
  } catch (error) {
    failure = error as Error;
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    client.release(failure);
  }
}
