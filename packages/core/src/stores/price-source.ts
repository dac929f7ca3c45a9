/**
 * Where USD prices come from: a port (an oracle, a price API) that answers with the price or a
 * promise of it (`MaybePromise`); the in-memory implementation, filled from fixtures, is the
 * embedded default.
 * @module
 */
import { chainAddressKey } from "../evm/chain-address.js";
import type { MaybePromise } from "./maybe-promise.js";
import type { ProductRecord } from "./product-source.js";

export interface PriceSource {
  /** USD price of one whole unit of the product's asset, scaled by 10^18; undefined when unknown. */
  getUsdPriceWad(product: ProductRecord): MaybePromise<bigint | undefined>;
}

export interface AssetPrice {
  readonly chainId: number;
  readonly assetAddress: string;
  /** USD per whole unit, scaled by 10^18. */
  readonly usdPriceWad: bigint;
}

export class MemoryPriceSource implements PriceSource {
  readonly #prices = new Map<string, bigint>();
  /** Each product record's price (or none), found once per record (records are immutable). */
  readonly #priceOf = new WeakMap<ProductRecord, bigint | null>();

  constructor(prices: Iterable<AssetPrice> = []) {
    for (const price of prices)
      this.#prices.set(chainAddressKey(price.chainId, price.assetAddress), price.usdPriceWad);
  }

  /** Answered at once: the API does not wait for it (`MaybePromise`). */
  getUsdPriceWad(product: ProductRecord): bigint | undefined {
    let price = this.#priceOf.get(product);
    if (price === undefined) {
      price = this.#prices.get(chainAddressKey(product.chainId, product.assetAddress)) ?? null;
      this.#priceOf.set(product, price);
    }
    return price ?? undefined;
  }
}
