/**
 * Copies validated records (e.g. the fixture files, through the core's `loadFixtures`) into the
 * database, in one transaction. Idempotent: a row equal to its record is not touched, so running
 * it twice changes nothing. The files win for the rows they name (partners, products with their
 * metrics, vaults, holdings, prices); rows they do not name are kept. Keys and signing secrets are
 * only ever added or revoked: an import never re-activates what was revoked in the database.
 */
import {
  API_KEY_PREFIXES,
  type ApiKeyRecord,
  type AssetPrice,
  type Partner,
  type ProductRecord,
  type SandboxData,
  type VaultState,
} from "@partner-yield/core";
import { formatUnits, RATE_DECIMALS } from "@partner-yield/core/math";
import type pg from "pg";
import { guarded } from "./errors.js";

/** The records an import writes. */
export interface DataSet {
  readonly partners: readonly Partner[];
  readonly keys: readonly ApiKeyRecord[];
  readonly products: readonly ProductRecord[];
  readonly vaults: readonly VaultState[];
  readonly prices: readonly AssetPrice[];
}

/** The records of a loaded fixture directory. */
export function dataSetOf(data: SandboxData): DataSet {
  return {
    partners: data.partnerList,
    keys: data.keyRecords,
    products: data.productRecords,
    vaults: data.vaultStates,
    prices: data.assetPrices,
  };
}

export interface TableChanges {
  inserted: number;
  updated: number;
  unchanged: number;
}

export type ImportReport = Record<
  "partners" | "api_keys" | "signing_secrets" | "products" | "vaults" | "vault_holdings" | "asset_prices",
  TableChanges
>;

/** inserted: a new row; updated: a changed row; no row: unchanged (the WHERE of DO UPDATE was false). */
const OUTCOME = "returning (xmax = 0) as inserted";

/**
 * Writes `data` into the database in one transaction and says what changed, table by table.
 * @example const report = await importData(pool, dataSetOf(loadFixtureDir("fixtures")));
 */
export async function importData(pool: pg.Pool, data: DataSet): Promise<ImportReport> {
  const client = await guarded("connecting", () => pool.connect());
  const report = emptyReport();
  let failure: Error | undefined;
  const run = async (table: keyof ImportReport, text: string, values: unknown[]) => {
    const result = await client.query<{ inserted: boolean }>(text, values);
    const row = result.rows[0];
    const changes = report[table];
    if (row === undefined) changes.unchanged++;
    else if (row.inserted) changes.inserted++;
    else changes.updated++;
  };
  try {
    await client.query("begin");
    for (const p of data.partners) {
      await run(
        "partners",
        `insert into partners (id, name, rate_limit_sandbox, rate_limit_production) values ($1, $2, $3, $4)
         on conflict (id) do update set name = excluded.name, rate_limit_sandbox = excluded.rate_limit_sandbox,
           rate_limit_production = excluded.rate_limit_production
         where (partners.name, partners.rate_limit_sandbox, partners.rate_limit_production)
           is distinct from (excluded.name, excluded.rate_limit_sandbox, excluded.rate_limit_production)
         ${OUTCOME}`,
        [p.id, p.name, p.rateLimits?.sandbox ?? null, p.rateLimits?.production ?? null],
      );
      for (const secret of p.signingSecrets) {
        await run(
          "signing_secrets",
          `insert into signing_secrets (partner_id, secret) values ($1, $2)
           on conflict (partner_id, secret) do nothing ${OUTCOME}`,
          [p.id, secret],
        );
      }
    }
    for (const k of data.keys) {
      await run(
        "api_keys",
        `insert into api_keys (partner_id, environment, key_hash, display_prefix, status, label, revoked_at)
         values ($1, $2, $3, $4, $5, $6, case when $5 = 'revoked' then now() end)
         on conflict (key_hash) do update set status = 'revoked', revoked_at = now()
         where api_keys.status = 'active' and excluded.status = 'revoked'
         ${OUTCOME}`,
        [k.partnerId, k.environment, k.keyHash, API_KEY_PREFIXES[k.environment], k.status, k.label ?? null],
      );
    }
    for (const p of data.products) {
      const m = p.metrics;
      await run(
        "products",
        `insert into products (partner_id, slug, chain, chain_id, wrapper_address, underlying_vault_address,
           asset_address, asset_symbol, asset_decimals, decimals_offset, status, service_fee_bps, partner_fee_bps,
           display_name, description, metrics_as_of_date, wrapper_total_assets, underlying_apy)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
         on conflict (partner_id, slug) do update set chain = excluded.chain, chain_id = excluded.chain_id,
           wrapper_address = excluded.wrapper_address, underlying_vault_address = excluded.underlying_vault_address,
           asset_address = excluded.asset_address, asset_symbol = excluded.asset_symbol,
           asset_decimals = excluded.asset_decimals, decimals_offset = excluded.decimals_offset,
           status = excluded.status, service_fee_bps = excluded.service_fee_bps,
           partner_fee_bps = excluded.partner_fee_bps, display_name = excluded.display_name,
           description = excluded.description, metrics_as_of_date = excluded.metrics_as_of_date,
           wrapper_total_assets = excluded.wrapper_total_assets, underlying_apy = excluded.underlying_apy
         where (products.chain, products.chain_id, products.wrapper_address, products.underlying_vault_address,
             products.asset_address, products.asset_symbol, products.asset_decimals, products.decimals_offset,
             products.status, products.service_fee_bps, products.partner_fee_bps, products.display_name,
             products.description, products.metrics_as_of_date, products.wrapper_total_assets,
             products.underlying_apy)
           is distinct from (excluded.chain, excluded.chain_id, excluded.wrapper_address,
             excluded.underlying_vault_address, excluded.asset_address, excluded.asset_symbol,
             excluded.asset_decimals, excluded.decimals_offset, excluded.status, excluded.service_fee_bps,
             excluded.partner_fee_bps, excluded.display_name, excluded.description, excluded.metrics_as_of_date,
             excluded.wrapper_total_assets, excluded.underlying_apy)
         ${OUTCOME}`,
        [
          p.partnerId,
          p.slug,
          p.chain,
          p.chainId,
          p.wrapperAddress,
          p.underlyingVaultAddress,
          p.assetAddress,
          p.assetSymbol,
          p.assetDecimals,
          p.decimalsOffset,
          p.status,
          p.serviceFeeBps,
          p.partnerFeeBps,
          p.displayName,
          p.description,
          m?.asOfDate ?? null,
          m === null ? null : String(m.wrapperTotalAssets),
          m === null ? null : formatUnits(m.underlyingApyWad, RATE_DECIMALS),
        ],
      );
    }
    for (const v of data.vaults) {
      const wrapper = v.wrapperAddress.toLowerCase();
      await run(
        "vaults",
        `insert into vaults (chain_id, wrapper_address, total_assets, total_supply) values ($1, $2, $3, $4)
         on conflict (chain_id, wrapper_address) do update set total_assets = excluded.total_assets,
           total_supply = excluded.total_supply
         where (vaults.total_assets, vaults.total_supply) is distinct from (excluded.total_assets, excluded.total_supply)
         ${OUTCOME}`,
        [v.chainId, wrapper, String(v.totalAssets), String(v.totalSupply)],
      );
      for (const [wallet, shares] of v.holdings) {
        await run(
          "vault_holdings",
          `insert into vault_holdings (chain_id, wrapper_address, wallet_address, shares) values ($1, $2, $3, $4)
           on conflict (chain_id, wrapper_address, wallet_address) do update set shares = excluded.shares
           where vault_holdings.shares is distinct from excluded.shares
           ${OUTCOME}`,
          [v.chainId, wrapper, wallet.toLowerCase(), String(shares)],
        );
      }
    }
    for (const price of data.prices) {
      await run(
        "asset_prices",
        `insert into asset_prices (chain_id, asset_address, usd_price) values ($1, $2, $3)
         on conflict (chain_id, asset_address) do update set usd_price = excluded.usd_price
         where asset_prices.usd_price is distinct from excluded.usd_price
         ${OUTCOME}`,
        [price.chainId, price.assetAddress.toLowerCase(), formatUnits(price.usdPriceWad, RATE_DECIMALS)],
      );
    }
    await client.query("commit");
    return report;
  } catch (error) {
    failure = error as Error;
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    client.release(failure);
  }
}

function emptyReport(): ImportReport {
  const zero = (): TableChanges => ({ inserted: 0, updated: 0, unchanged: 0 });
  return {
    partners: zero(),
    api_keys: zero(),
    signing_secrets: zero(),
    products: zero(),
    vaults: zero(),
    vault_holdings: zero(),
    asset_prices: zero(),
  };
}
