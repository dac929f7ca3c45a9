/**
 * Where products come from: a port so a team can back it with a database without touching the
 * core; each method answers with its value or a promise of it (`MaybePromise`). The in-memory
 * implementation, filled from fixtures, is the embedded default.
 * @module
 */
import type { MaybePromise } from "./maybe-promise.js";

/**
 * A product's lifecycle state (CONTRACT §8): `active ⇄ paused`, either `→ deprecated` (terminal).
 * @example PRODUCT_STATUSES.includes("paused"); // true
 */
export const PRODUCT_STATUSES = ["active", "paused", "deprecated"] as const;
export type ProductStatus = (typeof PRODUCT_STATUSES)[number];

/**
 * A product as the core holds it: amounts in base units, rates scaled by 10^18 (CONTRACT §1). Its
 * partner is named by id only: the answers show the partner's name as the `PartnerStore` holds it
 * (the authenticated partner's), so products kept in a team's code never disagree with it.
 */
export interface ProductRecord {
  readonly partnerId: string;
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
  listProducts(partnerId: string): MaybePromise<readonly ProductRecord[]>;
  /** The partner's product with this slug, or undefined (also for another partner's slug). */
  getProduct(partnerId: string, slug: string): MaybePromise<ProductRecord | undefined>;
}

export class MemoryProductSource implements ProductSource {
  readonly #byPartner = new Map<string, ProductRecord[]>();
  /** Partner → slug → product: a lookup builds no key string. */
  readonly #bySlug = new Map<string, Map<string, ProductRecord>>();

  constructor(products: Iterable<ProductRecord> = []) {
    for (const product of products) {
      const list = this.#byPartner.get(product.partnerId) ?? [];
      list.push(product);
      this.#byPartner.set(product.partnerId, list);
      let slugs = this.#bySlug.get(product.partnerId);
      if (slugs === undefined) {
        slugs = new Map();
        this.#bySlug.set(product.partnerId, slugs);
      }
      slugs.set(product.slug, product);
    }
    for (const list of this.#byPartner.values())
      list.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  }

  /** Answered at once, as is `getProduct`: the API does not wait for them (`MaybePromise`). */
  listProducts(partnerId: string): readonly ProductRecord[] {
    return this.#byPartner.get(partnerId) ?? [];
  }

  getProduct(partnerId: string, slug: string): ProductRecord | undefined {
    return this.#bySlug.get(partnerId)?.get(slug);
  }
}
