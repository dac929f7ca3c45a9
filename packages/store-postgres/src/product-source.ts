/**
 * Products with their latest metrics (CONTRACT §8), wallet holdings in vaults (CONTRACT §2) and USD
 * prices, read from PostgreSQL on every request, or with a read cache (read-cache.ts) from the
 * cache on a hit: one UPDATE of a product's status or metrics, a vault's totals or a price is
 * served by every instance on the next request (with a cache, the next after the change's
 * notification arrives).
 */
import {
  type Holding,
  type MaybePromise,
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
import { PostgresPriceTable } from "./price-table.js";
import { type CachedVault, cacheKey, type PostgresReadCache } from "./read-cache.js";

interface ProductRow {
  partner_id: string;
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
const SELECT = `select p.partner_id, p.slug, p.chain, p.chain_id, p.wrapper_address,
  p.underlying_vault_address, p.asset_address, p.asset_symbol, p.asset_decimals, p.decimals_offset, p.status,
  p.service_fee_bps, p.partner_fee_bps, p.display_name, p.description,
  to_char(p.metrics_as_of_date, 'YYYY-MM-DD') as as_of_date,
  p.wrapper_total_assets::text as wrapper_total_assets,
  (p.underlying_apy * 1000000000000000000)::numeric(78, 0)::text as underlying_apy_wad
from products p`;

/**
 * @example
 * const products = new PostgresProductSource(pool, readCache);
 * const product = await products.getProduct("acme", "usdc-base-prime");
 */
export class PostgresProductSource implements ProductSource {
  readonly #pool: pg.Pool;
  readonly #cache: PostgresReadCache | undefined;

  constructor(pool: pg.Pool, cache?: PostgresReadCache | undefined) {
    this.#pool = pool;
    this.#cache = cache;
  }

  /** The list itself on a cache hit; otherwise a promise of what the database holds. */
  listProducts(partnerId: string): MaybePromise<readonly ProductRecord[]> {
    const hit = this.#cache?.productLists.get(partnerId) as readonly ProductRecord[] | null | undefined;
    return hit ?? this.#list(partnerId);
  }

  /** The product itself on a cache hit; otherwise a promise of what the database holds. */
  getProduct(partnerId: string, slug: string): MaybePromise<ProductRecord | undefined> {
    const hit = this.#cache?.products.get(cacheKey(partnerId, slug)) as ProductRecord | null | undefined;
    if (hit === undefined) return this.#get(partnerId, slug);
    return hit ?? undefined;
  }

  async #list(partnerId: string): Promise<readonly ProductRecord[]> {
    const table = this.#cache?.productLists;
    const generation = table?.generation ?? 0;
    const result = await guarded("listing products", () =>
      this.#pool.query<ProductRow>(`${SELECT} where p.partner_id = $1 order by p.slug collate "C"`, [
        partnerId,
      ]),
    );
    const list = result.rows.map(toProductRecord);
    table?.fill(partnerId, list, generation);
    return list;
  }

  async #get(partnerId: string, slug: string): Promise<ProductRecord | undefined> {
    const table = this.#cache?.products;
    const generation = table?.generation ?? 0;
    const result = await guarded("reading a product", () =>
      this.#pool.query<ProductRow>(`${SELECT} where p.partner_id = $1 and p.slug = $2`, [partnerId, slug]),
    );
    const row = result.rows[0];
    const product = row === undefined ? undefined : toProductRecord(row);
    table?.fill(cacheKey(partnerId, slug), product ?? null, generation);
    return product;
  }
}

/**
 * @example
 * const positions = new PostgresPositionSource(pool, readCache);
 * const { shares, assets } = await positions.getHolding(product, "0xAbC…");
 */
export class PostgresPositionSource implements PositionSource {
  readonly #pool: pg.Pool;
  readonly #cache: PostgresReadCache | undefined;

  constructor(pool: pg.Pool, cache?: PostgresReadCache | undefined) {
    this.#pool = pool;
    this.#cache = cache;
  }

  /** The holding itself when the vault and the wallet are both cached; otherwise a promise. */
  getHolding(product: ProductRecord, wallet: string): MaybePromise<Holding> {
    const cache = this.#cache;
    if (cache === undefined) return this.#read(product, wallet);
    const vaultKey = cacheKey(product.chainId, product.wrapperAddress.toLowerCase());
    const vault = cache.vaults.get(vaultKey);
    if (vault === undefined) return this.#read(product, wallet);
    const shares = cache.holdings.get(cacheKey(vaultKey, wallet.toLowerCase()));
    if (shares === undefined) return this.#read(product, wallet);
    return holding(product, vault, shares ?? 0n);
  }

  async #read(product: ProductRecord, wallet: string): Promise<Holding> {
    const cache = this.#cache;
    const vaultGeneration = cache?.vaults.generation ?? 0;
    const holdingGeneration = cache?.holdings.generation ?? 0;
    const wrapper = product.wrapperAddress.toLowerCase();
    const address = wallet.toLowerCase();
    const result = await guarded("reading a position", () =>
      this.#pool.query<{ total_assets: string; total_supply: string; shares: string | null }>(
        `select v.total_assets::text as total_assets, v.total_supply::text as total_supply,
           h.shares::text as shares
         from vaults v
         left join vault_holdings h on h.chain_id = v.chain_id and h.wrapper_address = v.wrapper_address
           and h.wallet_address = $3
         where v.chain_id = $1 and v.wrapper_address = $2`,
        [product.chainId, wrapper, address],
      ),
    );
    const row = result.rows[0];
    const vault =
      row === undefined
        ? null
        : { totalAssets: BigInt(row.total_assets), totalSupply: BigInt(row.total_supply) };
    const shares = row === undefined || row.shares === null ? null : BigInt(row.shares);
    if (cache !== undefined) {
      const vaultKey = cacheKey(product.chainId, wrapper);
      cache.vaults.fill(vaultKey, vault, vaultGeneration);
      // Without a vault there is no holding (its foreign key): the wallet's answer is that too.
      cache.holdings.fill(cacheKey(vaultKey, address), shares, holdingGeneration);
    }
    return holding(product, vault, shares ?? 0n);
  }
}

function holding(product: ProductRecord, vault: CachedVault | null, shares: bigint): Holding {
  if (vault === null) return { shares: 0n, assets: 0n };
  const totals = { totalAssets: vault.totalAssets, totalSupply: vault.totalSupply };
  if (shares === 0n) return { shares: 0n, assets: 0n, vault: totals };
  const assets = convertToAssets(shares, vault.totalAssets, vault.totalSupply, product.decimalsOffset);
  return { shares, assets, vault: totals };
}

/**
 * @example
 * const prices = new PostgresPriceSource(pool, readCache);
 * const wad = await prices.getUsdPriceWad(product); // USD per whole unit, scaled by 10^18
 */
export class PostgresPriceSource implements PriceSource {
  readonly #table: PostgresPriceTable;

  constructor(pool: pg.Pool, cache?: PostgresReadCache | undefined) {
    this.#table = new PostgresPriceTable(pool, cache);
  }

  /** The price itself on a cache hit; otherwise a promise of what the database holds. */
  getUsdPriceWad(product: ProductRecord): MaybePromise<bigint | undefined> {
    const row = this.#table.cachedPrice(product.chainId, product.assetAddress);
    if (row === undefined) return this.#read(product);
    return row?.usdPriceWad;
  }

  async #read(product: ProductRecord): Promise<bigint | undefined> {
    return (await this.#table.getPrice(product.chainId, product.assetAddress))?.usdPriceWad;
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
