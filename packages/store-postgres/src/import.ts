/**
 * Copies validated records (e.g. the fixture files, through the core's `loadFixtures`) into the
 * database, in one transaction. It inserts what is missing and, by default, changes nothing that
 * is there: a row an operator changed (a product paused by SQL, a partner's limit raised) stays as
 * the database has it and is reported as `kept`; with `overwrite`, the records win for the rows
 * they name (partners, products with their metrics, vaults, holdings, prices). Rows the records do
 * not name are always kept, and a row equal to its record is never touched, so importing twice
 * changes nothing. Keys and signing secrets are only ever added or revoked: an import never
 * re-activates what was revoked in the database.
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
import { type SecretKeyring, secretColumns } from "./secret-keys.js";
import { inTransaction } from "./transaction.js";

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
  /** Rows the database did not hold. */
  inserted: number;
  /** Rows that differed from their record and were written as the record says (`overwrite`). */
  updated: number;
  /** Rows that differ from their record and were left as the database has them (no `overwrite`). */
  kept: number;
  /** Rows equal to their record. */
  unchanged: number;
}

export interface ImportOptions {
  /** Write the records over rows that differ from them. Default false: only insert what is missing. */
  readonly overwrite?: boolean | undefined;
  /** Seals the signing secrets written (migration 0006); undefined: written in plain text. */
  readonly secretKeys?: SecretKeyring | undefined;
}

/** What an import did: counts per table, and the rows it left differing from their record. */
export interface ImportOutcome {
  readonly tables: ImportReport;
  /** `products acme/usdc-base-prime`…: the rows kept (or, with `overwrite`, written over). */
  readonly differing: readonly string[];
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
export async function importData(
  pool: pg.Pool,
  data: DataSet,
  options: ImportOptions = {},
): Promise<ImportReport> {
  return (await importDataSet(pool, data, options)).tables;
}

/**
 * `importData`, also naming the rows that differ from their record. Each row is written inside a
 * savepoint; when that changed an existing row and `overwrite` is not given, the savepoint is
 * rolled back (its change notification with it), so the row stays exactly as it was.
 * @example const { tables, differing } = await importDataSet(pool, data); // differing: ["products acme/usdc-base-prime"]
 */
export async function importDataSet(
  pool: pg.Pool,
  data: DataSet,
  options: ImportOptions = {},
): Promise<ImportOutcome> {
  const overwrite = options.overwrite === true;
  return inTransaction(pool, async (client) => {
    const report = emptyReport();
    const differing: string[] = [];
    /** `name` labels the row in `differing`; `always` applies a change whatever `overwrite` says. */
    const run = async (
      table: keyof ImportReport,
      text: string,
      values: unknown[],
      name?: string,
      always = false,
    ) => {
      const changes = report[table];
      await client.query("savepoint import_row");
      let row: { inserted: boolean } | undefined;
      try {
        row = (await client.query<{ inserted: boolean }>(text, values)).rows[0];
      } catch (error) {
        // A row the file would move out of a terminal state (a product deprecated in the database):
        // refused by the schema; without --overwrite it is an operator's change, kept.
        if (overwrite || (error as { code?: string }).code !== "23514") throw error;
        await client.query("rollback to savepoint import_row");
        changes.kept++;
        differing.push(`${table} ${name ?? String(values[0])}`);
        return;
      }
      if (row === undefined) changes.unchanged++;
      else if (row.inserted) changes.inserted++;
      else if (overwrite || always) {
        changes.updated++;
        differing.push(`${table} ${name ?? String(values[0])}`);
      } else {
        await client.query("rollback to savepoint import_row");
        changes.kept++;
        differing.push(`${table} ${name ?? String(values[0])}`);
        return;
      }
      await client.query("release savepoint import_row");
    };
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
        p.id,
      );
      for (const secret of p.signingSecrets) {
        // Found by its SHA-256 (a row may hold it sealed); never written over.
        const c = secretColumns(options.secretKeys, p.id, secret);
        await run(
          "signing_secrets",
          `insert into signing_secrets (partner_id, secret, key_id, sealed, secret_sha256, last_four)
           values ($1, $2, $3, $4, $5, $6)
           on conflict (partner_id, secret_sha256) do nothing ${OUTCOME}`,
          [p.id, c.secret, c.keyId, c.sealed, c.sha256, c.lastFour],
          `${p.id} secret …${c.lastFour}`,
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
        `${k.partnerId} ${k.environment} key revoked by the file`,
        // A revocation in the file is applied whatever --overwrite says (a leaked key cannot wait).
        true,
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
        `${p.partnerId}/${p.slug}`,
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
        `${v.chainId}/${wrapper}`,
      );
      for (const [wallet, shares] of v.holdings) {
        await run(
          "vault_holdings",
          `insert into vault_holdings (chain_id, wrapper_address, wallet_address, shares) values ($1, $2, $3, $4)
           on conflict (chain_id, wrapper_address, wallet_address) do update set shares = excluded.shares
           where vault_holdings.shares is distinct from excluded.shares
           ${OUTCOME}`,
          [v.chainId, wrapper, wallet.toLowerCase(), String(shares)],
          `${v.chainId}/${wrapper}/${wallet.toLowerCase()}`,
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
        `${price.chainId}/${price.assetAddress.toLowerCase()}`,
      );
    }
    return { tables: report, differing };
  });
}

function emptyReport(): ImportReport {
  const zero = (): TableChanges => ({ inserted: 0, updated: 0, kept: 0, unchanged: 0 });
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
