/**
 * API keys by SHA-256 hash (CONTRACT §4); never the key itself. Every lookup reads the database,
 * so a key revoked there is refused by every instance on its next request.
 */
import type { ApiKeyRecord, ApiKeyStatus, Environment, KeyStore } from "@partner-yield/core";
import type pg from "pg";
import { guarded } from "./errors.js";

/** `last_used_at` is written at most this often per key and process: a lookup must stay a read. */
const LAST_USED_RESOLUTION_MS = 60_000;

interface KeyRow {
  id: string;
  partner_id: string;
  environment: Environment;
  status: ApiKeyStatus;
  label: string | null;
}

export class PostgresKeyStore implements KeyStore {
  readonly #pool: pg.Pool;
  readonly #release: () => Promise<void>;
  readonly #touched = new Map<string, number>();

  constructor(pool: pg.Pool, release: () => Promise<void> = () => Promise.resolve()) {
    this.#pool = pool;
    this.#release = release;
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const result = await guarded("looking up an API key", () =>
      this.#pool.query<KeyRow>(
        "select id::text as id, partner_id, environment, status, label from api_keys where key_hash = $1",
        [keyHash],
      ),
    );
    const row = result.rows[0];
    if (row === undefined) return undefined;
    if (row.status === "active") this.#touch(row.id);
    return {
      keyHash,
      partnerId: row.partner_id,
      environment: row.environment,
      status: row.status,
      ...(row.label === null ? {} : { label: row.label }),
    };
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
