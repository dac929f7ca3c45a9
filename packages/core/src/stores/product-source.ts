/**
 * Where products, positions and prices come from. Each is an async port so a team can back it
 * with a database or the chain (ERC-4626 `convertToAssets` via an RPC) without touching the core.
 * The in-memory implementations, filled from fixtures, are the embedded default.
 */
import type { ProductStatus } from "../http/schemas.js";
import { convertToAssets } from "../math/yield-math.js";

/** A product as the core holds it: amounts in base units, rates scaled by 10^18 (CONTRACT §1). */
export interface ProductRecord {
  readonly partnerId: string;
  readonly partnerName: string;
  readonly slug: string;
  readonly chain: string;
  readonly chainId: number;
  /** EIP-55 form. */
  readonly wrapperAddress: string;
  readonly underlyingVaultAddress: string;
  readonly assetAddress: string;
  readonly assetSymbol: string;
  readonly assetDecimals: number;
  /** ERC-4626 decimals offset δ of the wrapper: share decimals = assetDecimals + δ (CONTRACT §2). */
  readonly decimalsOffset: number;
  readonly status: ProductStatus;
  readonly serviceFeeBps: number;
  readonly partnerFeeBps: number;
  readonly displayName: string;
  readonly description: string;
  readonly metrics: ProductMetrics | null;
}

export interface ProductMetrics {
  /** UTC date, YYYY-MM-DD. */
  readonly asOfDate: string;
  /** Base units of the asset. */
  readonly wrapperTotalAssets: bigint;
  /** Fraction scaled by 10^18 (0.0523 → 52300000000000000n). */
  readonly underlyingApyWad: bigint;
}

export interface ProductSource {
  /** All of the partner's products, every status, ordered by slug (CONTRACT §8). */
  listProducts(partnerId: string): Promise<readonly ProductRecord[]>;
  /** The partner's product with this slug, or undefined (also for another partner's slug). */
  getProduct(partnerId: string, slug: string): Promise<ProductRecord | undefined>;
}

/** A wallet's holding in a product's wrapper, in base units. */
export interface Holding {
  /** Shares, at assetDecimals + decimalsOffset. */
  readonly shares: bigint;
  /** Assets the shares convert to, at assetDecimals (the vault's own answer where available). */
  readonly assets: bigint;
}

export interface PositionSource {
  /** `wallet` is in EIP-55 form. A wallet that holds nothing gets zero shares and assets. */
  getHolding(product: ProductRecord, wallet: string): Promise<Holding>;
}

export interface PriceSource {
  /** USD price of one whole unit of the product's asset, scaled by 10^18; undefined when unknown. */
  getUsdPriceWad(product: ProductRecord): Promise<bigint | undefined>;
}

export class MemoryProductSource implements ProductSource {
  readonly #byPartner = new Map<string, ProductRecord[]>();
  readonly #bySlug = new Map<string, ProductRecord>();

  constructor(products: Iterable<ProductRecord> = []) {
    for (const product of products) {
      const list = this.#byPartner.get(product.partnerId) ?? [];
      list.push(product);
      this.#byPartner.set(product.partnerId, list);
      this.#bySlug.set(`${product.partnerId}\u0000${product.slug}`, product);
    }
    for (const list of this.#byPartner.values())
      list.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  }

  listProducts(partnerId: string): Promise<readonly ProductRecord[]> {
    return Promise.resolve(this.#byPartner.get(partnerId) ?? []);
  }

  getProduct(partnerId: string, slug: string): Promise<ProductRecord | undefined> {
    return Promise.resolve(this.#bySlug.get(`${partnerId}\u0000${slug}`));
  }
}

/** State of one ERC-4626 wrapper: totals and per-wallet shares, all in base units. */
export interface VaultState {
  readonly chainId: number;
  readonly wrapperAddress: string;
  readonly totalAssets: bigint;
  readonly totalSupply: bigint;
  /** Lowercase wallet address → shares. */
  readonly holdings: ReadonlyMap<string, bigint>;
}

/** Positions from vault states, with ERC-4626 `convertToAssets` and virtual shares (CONTRACT §2). */
export class MemoryPositionSource implements PositionSource {
  readonly #vaults = new Map<string, VaultState>();

  constructor(vaults: Iterable<VaultState> = []) {
    for (const vault of vaults) this.#vaults.set(vaultKey(vault.chainId, vault.wrapperAddress), vault);
  }

  getHolding(product: ProductRecord, wallet: string): Promise<Holding> {
    const vault = this.#vaults.get(vaultKey(product.chainId, product.wrapperAddress));
    const shares = vault?.holdings.get(wallet.toLowerCase()) ?? 0n;
    if (vault === undefined || shares === 0n) return Promise.resolve({ shares: 0n, assets: 0n });
    const assets = convertToAssets(shares, vault.totalAssets, vault.totalSupply, product.decimalsOffset);
    return Promise.resolve({ shares, assets });
  }
}

export interface AssetPrice {
  readonly chainId: number;
  readonly assetAddress: string;
  /** USD per whole unit, scaled by 10^18. */
  readonly usdPriceWad: bigint;
}

export class MemoryPriceSource implements PriceSource {
  readonly #prices = new Map<string, bigint>();

  constructor(prices: Iterable<AssetPrice> = []) {
    for (const price of prices)
      this.#prices.set(vaultKey(price.chainId, price.assetAddress), price.usdPriceWad);
  }

  getUsdPriceWad(product: ProductRecord): Promise<bigint | undefined> {
    return Promise.resolve(this.#prices.get(vaultKey(product.chainId, product.assetAddress)));
  }
}

function vaultKey(chainId: number, address: string): string {
  return `${chainId}:${address.toLowerCase()}`;
}
