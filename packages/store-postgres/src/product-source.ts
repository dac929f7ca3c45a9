/**
 * Products with their latest metrics (CONTRACT §8), wallet holdings in vaults (CONTRACT §2) and USD
 * prices, read from PostgreSQL on every request and never cached: one UPDATE of a product's status
 * or metrics, a vault's totals or a price is served by every instance on the next request.
 */
import {
  type Holding,
  type PositionSource,
  type PriceSource,
  type ProductRecord,
  type ProductSource,
  type ProductStatus,
  toChecksumAddress,
} from "@partner-yield/core";
import { convertToAssets } from "@partner-yield/core/math";
import type pg from "pg";
import { guarded } from "./errors.js";

interface ProductRow {
  partner_id: string;
  partner_name: string;
  slug: string;
  chain: string;
  chain_id: number;
  wrapper_address: string;
  underlying_vault_address: string;
  asset_address: string;
  asset_symbol: string;
  asset_decimals: number;
  decimals_offset: number;
  status: ProductStatus;
  service_fee_bps: number;
  partner_fee_bps: number;
  display_name: string;
  description: string;
  as_of_date: string | null;
  wrapper_total_assets: string | null;
  underlying_apy_wad: string | null;
}

// Rates leave the database as integers scaled by 10^18 (exact: the column has 18 decimals).
const SELECT = `select p.partner_id, pa.name as partner_name, p.slug, p.chain, p.chain_id, p.wrapper_address,
  p.underlying_vault_address, p.asset_address, p.asset_symbol, p.asset_decimals, p.decimals_offset, p.status,
  p.service_fee_bps, p.partner_fee_bps, p.display_name, p.description,
  to_char(p.metrics_as_of_date, 'YYYY-MM-DD') as as_of_date,
  p.wrapper_total_assets::text as wrapper_total_assets,
  (p.underlying_apy * 1000000000000000000)::numeric(78, 0)::text as underlying_apy_wad
from products p join partners pa on pa.id = p.partner_id`;

export class PostgresProductSource implements ProductSource {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async listProducts(partnerId: string): Promise<readonly ProductRecord[]> {
    const result = await guarded("listing products", () =>
      this.#pool.query<ProductRow>(`${SELECT} where p.partner_id = $1 order by p.slug collate "C"`, [
        partnerId,
      ]),
    );
    return result.rows.map(toProductRecord);
  }

  async getProduct(partnerId: string, slug: string): Promise<ProductRecord | undefined> {
    const result = await guarded("reading a product", () =>
      this.#pool.query<ProductRow>(`${SELECT} where p.partner_id = $1 and p.slug = $2`, [partnerId, slug]),
    );
    const row = result.rows[0];
    return row === undefined ? undefined : toProductRecord(row);
  }
}

export class PostgresPositionSource implements PositionSource {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async getHolding(product: ProductRecord, wallet: string): Promise<Holding> {
    const result = await guarded("reading a position", () =>
      this.#pool.query<{ total_assets: string; total_supply: string; shares: string }>(
        `select v.total_assets::text as total_assets, v.total_supply::text as total_supply,
           coalesce(h.shares, 0)::text as shares
         from vaults v
         left join vault_holdings h on h.chain_id = v.chain_id and h.wrapper_address = v.wrapper_address
           and h.wallet_address = $3
         where v.chain_id = $1 and v.wrapper_address = $2`,
        [product.chainId, product.wrapperAddress.toLowerCase(), wallet.toLowerCase()],
      ),
    );
    const row = result.rows[0];
    const shares = row === undefined ? 0n : BigInt(row.shares);
    if (row === undefined || shares === 0n) return { shares: 0n, assets: 0n };
    const assets = convertToAssets(
      shares,
      BigInt(row.total_assets),
      BigInt(row.total_supply),
      product.decimalsOffset,
    );
    return { shares, assets };
  }
}

export class PostgresPriceSource implements PriceSource {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async getUsdPriceWad(product: ProductRecord): Promise<bigint | undefined> {
    const result = await guarded("reading a price", () =>
      this.#pool.query<{ wad: string }>(
        `select (usd_price * 1000000000000000000)::numeric(78, 0)::text as wad
         from asset_prices where chain_id = $1 and asset_address = $2`,
        [product.chainId, product.assetAddress.toLowerCase()],
      ),
    );
    const row = result.rows[0];
    return row === undefined ? undefined : BigInt(row.wad);
  }
}

/** EIP-55 forms already computed: a handful of addresses, read on every request. */
const checksummed = new Map<string, string>();

function eip55(address: string): string {
  let out = checksummed.get(address);
  if (out === undefined) {
    out = toChecksumAddress(address);
    if (checksummed.size > 10_000) checksummed.clear();
    checksummed.set(address, out);
  }
  return out;
}

function toProductRecord(row: ProductRow): ProductRecord {
  return {
    partnerId: row.partner_id,
    partnerName: row.partner_name,
    slug: row.slug,
    chain: row.chain,
    chainId: row.chain_id,
    wrapperAddress: eip55(row.wrapper_address),
    underlyingVaultAddress: eip55(row.underlying_vault_address),
    assetAddress: eip55(row.asset_address),
    assetSymbol: row.asset_symbol,
    assetDecimals: row.asset_decimals,
    decimalsOffset: row.decimals_offset,
    status: row.status,
    serviceFeeBps: row.service_fee_bps,
    partnerFeeBps: row.partner_fee_bps,
    displayName: row.display_name,
    description: row.description,
    metrics:
      row.as_of_date === null || row.wrapper_total_assets === null || row.underlying_apy_wad === null
        ? null
        : {
            asOfDate: row.as_of_date,
            wrapperTotalAssets: BigInt(row.wrapper_total_assets),
            underlyingApyWad: BigInt(row.underlying_apy_wad),
          },
  };
}
