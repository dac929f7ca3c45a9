/**
 * Test support for the read cache: a store set with a cache of its own (short heartbeats, its own
 * application name), polling until an instance sees what it should, and the rows of the sandbox
 * data the tests change.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { loadSandbox } from "@partner-yield/node-adapter/testing";
import type pg from "pg";
import { createPostgresStores, dataSetOf, importData, type PostgresStores } from "../src/index.js";
import type { ReadCacheOptions } from "../src/read-cache.js";

/** Stores over `pool` with a read cache named `application_name = name`; closed by the caller. */
export function cachedStores(
  pool: pg.Pool,
  name: string,
  options: ReadCacheOptions = {},
): PostgresStores & { readonly readCache: NonNullable<PostgresStores["readCache"]> } {
  const stores = createPostgresStores(pool, {
    readCache: { applicationName: name, heartbeatIntervalMs: 200, heartbeatTimeoutMs: 1000, ...options },
  });
  assert.ok(stores.readCache !== undefined);
  return stores as PostgresStores & { readonly readCache: NonNullable<PostgresStores["readCache"]> };
}

/** Polls `check` (every 20 ms, up to `timeoutMs`) until it holds; the last failure otherwise. */
export async function eventually(what: string, check: () => unknown, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await check()) !== false) return;
    } catch (error) {
      if (Date.now() > end) throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
    }
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await delay(20);
  }
}

/** The sandbox's rows the tests read and change. */
export interface Sample {
  readonly keyHash: string;
  readonly keyId: string;
  readonly partnerId: string;
  readonly secretId: string;
  readonly secret: string;
  readonly slug: string;
}

/** Imports the sandbox data and picks an active key, its partner's secret and a product. */
export async function importSample(pool: pg.Pool): Promise<Sample> {
  await importData(pool, dataSetOf(loadSandbox()));
  const row = (
    await pool.query<{
      key_hash: string;
      key_id: string;
      partner_id: string;
      secret_id: string;
      secret: string;
      slug: string;
    }>(
      `select k.key_hash, k.id::text as key_id, k.partner_id, s.id::text as secret_id, s.secret, p.slug
       from api_keys k
       join signing_secrets s on s.partner_id = k.partner_id and s.status = 'active'
       join products p on p.partner_id = k.partner_id and p.status = 'active' and p.metrics_as_of_date is not null
       where k.status = 'active' and k.environment = 'sandbox'
       order by k.id, s.id, p.slug limit 1`,
    )
  ).rows[0];
  assert.ok(row !== undefined, "the sandbox has an active key, secret and product");
  return {
    keyHash: row.key_hash,
    keyId: row.key_id,
    partnerId: row.partner_id,
    secretId: row.secret_id,
    secret: row.secret,
    slug: row.slug,
  };
}

/** Whether the cache answers now. */
export function trusted(stores: PostgresStores): boolean {
  return stores.readCache?.state().trusted === true;
}
