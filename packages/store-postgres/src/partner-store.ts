/**
 * Partners with their per-environment limits and active signing secrets (CONTRACT §4, §7), read
 * on every request: a secret revoked in the database stops verifying on the next one.
 */
import type { Partner, PartnerStore } from "@partner-yield/core";
import type pg from "pg";
import { guarded } from "./errors.js";

interface PartnerRow {
  id: string;
  name: string;
  rate_limit_sandbox: number | null;
  rate_limit_production: number | null;
  secrets: string[];
}

const SELECT = `select p.id, p.name, p.rate_limit_sandbox, p.rate_limit_production,
  coalesce(array_agg(s.secret order by s.id) filter (where s.secret is not null), '{}') as secrets
from partners p
left join signing_secrets s on s.partner_id = p.id and s.status = 'active'
where p.id = $1
group by p.id`;

export class PostgresPartnerStore implements PartnerStore {
  readonly #pool: pg.Pool;
  readonly #release: () => Promise<void>;

  constructor(pool: pg.Pool, release: () => Promise<void> = () => Promise.resolve()) {
    this.#pool = pool;
    this.#release = release;
  }

  async getPartner(partnerId: string): Promise<Partner | undefined> {
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
      signingSecrets: row.secrets,
    };
  }

  close(): Promise<void> {
    return this.#release();
  }
}
