/**
 * API keys by SHA-256 hash (CONTRACT §4); never the key itself. Without a read cache every lookup
 * reads the database; with one (read-cache.ts) a hit is answered at once, and a key revoked in the
 * database is refused by every instance as soon as the change's notification arrives.
 */
import type { ApiKeyRecord, ApiKeyStatus, Environment, KeyStore, MaybePromise } from "@partner-yield/core";
import type pg from "pg";
import { guarded } from "./errors.js";
import type { CachedKey, PostgresReadCache } from "./read-cache.js";

/** `last_used_at` is written at most this often per key and process: a lookup must stay a read. */
const LAST_USED_RESOLUTION_MS = 60_000;

interface KeyRow {
  id: string;
  partner_id: string;
  environment: Environment;
  status: ApiKeyStatus;
  label: string | null;
}

/**
 * @example
 * const keys = new PostgresKeyStore(pool); // every lookup a SELECT
 * const cached = new PostgresKeyStore(pool, undefined, readCache); // a hit answers at once
 */
export class PostgresKeyStore implements KeyStore {
  readonly #pool: pg.Pool;
  readonly #release: () => Promise<void>;
  readonly #cache: PostgresReadCache | undefined;
  readonly #touched = new Map<string, number>();

  constructor(
    pool: pg.Pool,
    release: () => Promise<void> = () => Promise.resolve(),
    cache?: PostgresReadCache | undefined,
  ) {
    this.#pool = pool;
    this.#release = release;
    this.#cache = cache;
  }

  /** The record itself on a cache hit; otherwise a promise of what the database holds. */
  findByHash(keyHash: string): MaybePromise<ApiKeyRecord | undefined> {
    const hit = this.#cache?.keys.get(keyHash) as CachedKey<ApiKeyRecord> | null | undefined;
    if (hit === undefined) return this.#read(keyHash);
    if (hit === null) return undefined;
    if (hit.record.status === "active") this.#touch(hit.id);
    return hit.record;
  }

  async #read(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const table = this.#cache?.keys;
    const generation = table?.generation ?? 0;
    const result = await guarded("looking up an API key", () =>
      this.#pool.query<KeyRow>(
        "select id::text as id, partner_id, environment, status, label from api_keys where key_hash = $1",
        [keyHash],
      ),
    );
    const row = result.rows[0];
    if (row === undefined) {
      table?.fill(keyHash, null, generation);
      return undefined;
    }
    if (row.status === "active") this.#touch(row.id);
    const record: ApiKeyRecord = {
      keyHash,
      id: row.id,
      partnerId: row.partner_id,
      environment: row.environment,
      status: row.status,
      ...(row.label === null ? {} : { label: row.label }),
    };
    table?.fill(keyHash, { id: row.id, record }, generation);
    return record;
  }

  close(): Promise<void> {
    return this.#release();
  }

  /** Records the key's last use, off the request's path; a failure only loses that timestamp. */
  #touch(id: string): void {
    const now = Date.now();
    const last = this.#touched.get(id);
    if (last !== undefined && now - last < LAST_USED_RESOLUTION_MS) return;
    if (this.#touched.size > 10_000) this.#touched.clear();
    this.#touched.set(id, now);
    this.#pool
      .query(
        `update api_keys set last_used_at = now()
         where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
        [id],
      )
      .catch(() => undefined);
  }
}
