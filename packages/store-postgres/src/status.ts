/** What `partner-yield db status` prints besides the schema version: rows per table. */
import type pg from "pg";
import { guarded } from "./errors.js";

export interface RowCounts {
  readonly partners: number;
  readonly apiKeys: { readonly active: number; readonly revoked: number };
  readonly signingSecrets: { readonly active: number; readonly revoked: number };
  readonly products: Readonly<Record<"active" | "paused" | "deprecated", number>>;
  readonly vaults: number;
  readonly vaultHoldings: number;
  readonly assetPrices: number;
  readonly events: number;
}

/** Row counts of every table (the schema must be current). */
export async function countRows(pool: pg.Pool): Promise<RowCounts> {
  const result = await guarded("counting rows", () =>
    pool.query<Record<string, string>>(`select
      (select count(*) from partners) as partners,
      (select count(*) from api_keys where status = 'active') as keys_active,
      (select count(*) from api_keys where status = 'revoked') as keys_revoked,
      (select count(*) from signing_secrets where status = 'active') as secrets_active,
      (select count(*) from signing_secrets where status = 'revoked') as secrets_revoked,
      (select count(*) from products where status = 'active') as products_active,
      (select count(*) from products where status = 'paused') as products_paused,
      (select count(*) from products where status = 'deprecated') as products_deprecated,
      (select count(*) from vaults) as vaults,
      (select count(*) from vault_holdings) as vault_holdings,
      (select count(*) from asset_prices) as asset_prices,
      (select count(*) from events) as events`),
  );
  const n = (name: string) => Number(result.rows[0]?.[name] ?? 0);
  return {
    partners: n("partners"),
    apiKeys: { active: n("keys_active"), revoked: n("keys_revoked") },
    signingSecrets: { active: n("secrets_active"), revoked: n("secrets_revoked") },
    products: {
      active: n("products_active"),
      paused: n("products_paused"),
      deprecated: n("products_deprecated"),
    },
    vaults: n("vaults"),
    vaultHoldings: n("vault_holdings"),
    assetPrices: n("asset_prices"),
    events: n("events"),
  };
}

/** Every partner's id, in id order. */
export async function listPartnerIds(pool: pg.Pool): Promise<string[]> {
  const result = await guarded("listing partners", () =>
    pool.query<{ id: string }>('select id from partners order by id collate "C"'),
  );
  return result.rows.map((row) => row.id);
}
