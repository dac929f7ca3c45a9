/**
 * Where a wallet's position comes from: a port so a team can back it with the chain (ERC-4626
 * `convertToAssets` via an RPC) without touching the core; it answers with the holding or a
 * promise of it (`MaybePromise`). The in-memory implementation, filled from fixtures, is the
 * embedded default.
 * @module
 */
import { chainAddressKey } from "../evm/chain-address.js";
import { convertToAssets } from "../math/yield-math.js";
import type { MaybePromise } from "./maybe-promise.js";
import type { ProductRecord } from "./product-source.js";

/** A wallet's holding in a product's wrapper, in base units. */
export interface Holding {
  /** Shares, at assetDecimals + decimalsOffset. */
  readonly shares: bigint;
  /** Assets the shares convert to, at assetDecimals (the vault's own answer where available). */
  readonly assets: bigint;
  /**
   * The vault totals `assets` was computed from, when the source computed it itself (the audit
   * view of the position answer, CONTRACT §2); absent when the vault answered `convertToAssets`
   * itself or the wrapper has no vault entry.
   */
  readonly vault?: HoldingVault;
}

/** The vault's totals a holding was converted with, in base units. */
export interface HoldingVault {
  readonly totalAssets: bigint;
  readonly totalSupply: bigint;
}

export interface PositionSource {
  /** `wallet` is in EIP-55 form. A wallet that holds nothing gets zero shares and assets. */
  getHolding(product: ProductRecord, wallet: string): MaybePromise<Holding>;
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
  /**
   * Each product record's vault (or none), found once per record: a record is immutable (its
   * fields are readonly), and the key of its wrapper costs a string and a lowercase each time.
   */
  readonly #vaultOf = new WeakMap<ProductRecord, VaultState | null>();

  constructor(vaults: Iterable<VaultState> = []) {
    for (const vault of vaults) this.#vaults.set(chainAddressKey(vault.chainId, vault.wrapperAddress), vault);
  }

  /** Answered at once: the API does not wait for it (`MaybePromise`). */
  getHolding(product: ProductRecord, wallet: string): Holding {
    let vault = this.#vaultOf.get(product);
    if (vault === undefined) {
      vault = this.#vaults.get(chainAddressKey(product.chainId, product.wrapperAddress)) ?? null;
      this.#vaultOf.set(product, vault);
    }
    if (vault === null) return { shares: 0n, assets: 0n };
    const shares = vault.holdings.get(wallet.toLowerCase()) ?? 0n;
    const totals = { totalAssets: vault.totalAssets, totalSupply: vault.totalSupply };
    if (shares === 0n) return { shares: 0n, assets: 0n, vault: totals };
    const assets = convertToAssets(shares, vault.totalAssets, vault.totalSupply, product.decimalsOffset);
    return { shares, assets, vault: totals };
  }
}
