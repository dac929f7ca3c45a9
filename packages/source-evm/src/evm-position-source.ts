/**
 * `PositionSource` on chain: the wrapper's `balanceOf(wallet)` and `convertToAssets(shares)` at
 * the latest block, in one call (position-lens.ts), for products whose chain has an RPC URL.
 * @module
 */
import {
  type Holding,
  type PositionSource,
  type ProductRecord,
  StoreUnavailableError,
} from "@partner-yield/core";
import type { Address } from "viem";
import type { EvmChains } from "./evm-chains.js";
import { readPosition } from "./position-lens.js";

export interface EvmPositionSourceOptions {
  /** Answers for products on chains without an RPC URL; default: 503 for them. */
  readonly otherChains?: PositionSource | undefined;
}

/**
 * @example
 * const positions = new EvmPositionSource(chains);
 * const { shares, assets } = await positions.getHolding(product, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
 */
export class EvmPositionSource implements PositionSource {
  readonly #chains: EvmChains;
  readonly #otherChains: PositionSource | undefined;

  constructor(chains: EvmChains, options: EvmPositionSourceOptions = {}) {
    this.#chains = chains;
    this.#otherChains = options.otherChains;
  }

  async getHolding(product: ProductRecord, wallet: string): Promise<Holding> {
    if (this.#chains.reader(product.chainId) === undefined) {
      if (this.#otherChains !== undefined) return this.#otherChains.getHolding(product, wallet);
      throw new StoreUnavailableError(`no RPC URL is configured for chain ${product.chainId}`, 300);
    }
    const { reader } = await this.#chains.verified(product);
    const block = await reader.latestBlock();
    return readPosition(reader, block, product.wrapperAddress as Address, wallet as Address);
  }
}
