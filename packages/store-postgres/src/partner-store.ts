/**
 * Partners with their per-environment limits and active signing secrets (CONTRACT §4, §7), read
 * on every request, from the database or, with a read cache, from the cache on a hit: a secret
 * revoked in the database stops verifying on the next request (with a cache, the next after the
 * change's notification arrives).
 */
import type { MaybePromise, Partner, PartnerStore } from "@partner-yield/core";
import type pg from "pg";
import { guarded, unavailable } from "./errors.js";
import type { PostgresReadCache } from "./read-cache.js";
import { openSecret, type SecretKeyring } from "./secret-keys.js";

interface PartnerRow {
  id: string;
  name: string;
  rate_limit_sandbox: number | null;
  rate_limit_production: number | null;
  secrets: (string | null)[];
  key_ids: (string | null)[];
  sealed: (string | null)[];
}

const SELECT = `select p.id, p.name, p.rate_limit_sandbox, p.rate_limit_production,
  coalesce(array_agg(s.secret order by s.id) filter (where s.id is not null), '{}') as secrets,
  coalesce(array_agg(s.key_id order by s.id) filter (where s.id is not null), '{}') as key_ids,
  coalesce(array_agg(encode(s.sealed, 'base64') order by s.id) filter (where s.id is not null), '{}') as sealed
from partners p
left join signing_secrets s on s.partner_id = p.id and s.status = 'active'
where p.id = $1
group by p.id`;

/**
 * @example
 * const partners = new PostgresPartnerStore(pool, undefined, readCache);
 * const partner = await partners.getPartner("acme"); // { id, name, rateLimits, signingSecrets }
 */
export class PostgresPartnerStore implements PartnerStore {
  readonly #pool: pg.Pool;
  readonly #release: () => Promise<void>;
  readonly #cache: PostgresReadCache | undefined;
  readonly #keys: SecretKeyring | undefined;

  /** `keys` opens the secrets sealed in the database (migration 0006); plain ones need none. */
  constructor(
    pool: pg.Pool,
    release: () => Promise<void> = () => Promise.resolve(),
    cache?: PostgresReadCache | undefined,
    keys?: SecretKeyring | undefined,
  ) {
    this.#pool = pool;
    this.#release = release;
    this.#cache = cache;
    this.#keys = keys;
  }

  /** The partner itself on a cache hit; otherwise a promise of what the database holds. */
  getPartner(partnerId: string): MaybePromise<Partner | undefined> {
    const hit = this.#cache?.partners.get(partnerId) as Partner | null | undefined;
    if (hit === undefined) return this.#read(partnerId);
    return hit ?? undefined;
  }

  async #read(partnerId: string): Promise<Partner | undefined> {
    const table = this.#cache?.partners;
    const generation = table?.generation ?? 0;
    const partner = await this.#query(partnerId);
    table?.fill(partnerId, partner ?? null, generation);
    return partner;
  }

  async #query(partnerId: string): Promise<Partner | undefined> {
    const result = await guarded("reading a partner", () =>
      this.#pool.query<PartnerRow>(SELECT, [partnerId]),
    );
    const row = result.rows[0];
    if (row === undefined) return undefined;
    const limits = {
      ...(row.rate_limit_sandbox === null ? {} : { sandbox: row.rate_limit_sandbox }),
      ...(row.rate_limit_production === null ? {} : { production: row.rate_limit_production }),
    };
    return {
      id: row.id,
      name: row.name,
      rateLimits: Object.keys(limits).length === 0 ? undefined : limits,
      // Opened here, so the cache and the HMAC hold the plain secret, in memory only.
      signingSecrets: this.#open(row),
    };
  }

  #open(row: PartnerRow): string[] {
    try {
      return row.secrets.map((secret, i) => {
        const sealed = row.sealed[i] ?? null;
        return openSecret(this.#keys, row.id, {
          secret,
          keyId: row.key_ids[i] ?? null,
          sealed: sealed === null ? null : Buffer.from(sealed, "base64"),
        });
      });
    } catch (error) {
      throw unavailable("opening a signing secret", error);
    }
  }

  close(): Promise<void> {
    return this.#release();
  }
}
