/**
 * The configured chains and the start-up check of every product served from them: the node's
 * chain id, `decimals()` of the asset and the wrapper, and that wrapper and underlying vault hold
 * the product's asset. A product that disagrees with the chain is refused — every answer that
 * needs it is 503, and the reason is logged — rather than served with wrongly scaled numbers.
 * @module
 */
import { type ProductRecord, StoreUnavailableError } from "@partner-yield/core";
import {
  AbiDecodingDataSizeTooSmallError,
  AbiDecodingZeroDataError,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  erc20Abi,
  erc4626Abi,
  getAddress,
} from "viem";
import { type BlockRef, ChainReader, type EvmChainConfig, type RpcReadOptions } from "./chain-reader.js";
import { rpcErrorReason } from "./rpc-errors.js";

/** Retry-After of a refused product: an operator must fix the record or the chain configuration. */
const REFUSED_RETRY_AFTER_SECONDS = 300;

/** What the chain says about a product that passed the check. */
export interface VerifiedProduct {
  readonly reader: ChainReader;
  /** `decimals()` of the underlying vault's shares (the unit of its share price). */
  readonly underlyingShareDecimals: number;
}

/** Outcome of checking one product. */
export interface ProductCheck {
  readonly slug: string;
  readonly partnerId: string;
  readonly chainId: number;
  /** ok: served from chain; refused: disagrees with the chain; unavailable: not checked yet (RPC). */
  readonly status: "ok" | "refused" | "unavailable";
  readonly reason?: string | undefined;
}

export interface EvmChainsOptions extends RpcReadOptions {
  /** One line per noteworthy event (a refused product); default: none. */
  readonly log?: ((line: string) => void) | undefined;
}

type Verdict = { ok: true; product: VerifiedProduct } | { ok: false; reason: string };

/**
 * @example
 * const chains = new EvmChains([{ chainId: 8453, name: "base", rpcUrl }], { timeoutMs: 3000 });
 * for (const check of await chains.verifyProducts(records)) console.error(check);
 */
export class EvmChains {
  readonly #readers = new Map<number, ChainReader>();
  readonly #verdicts = new Map<string, Promise<Verdict>>();
  readonly #log: (line: string) => void;

  constructor(configs: readonly EvmChainConfig[], options: EvmChainsOptions = {}) {
    for (const config of configs) {
      if (this.#readers.has(config.chainId))
        throw new RangeError(`chain ${config.chainId} is configured twice`);
      this.#readers.set(config.chainId, new ChainReader(config, options));
    }
    this.#log = options.log ?? (() => {});
  }

  /** The reader of a configured chain. */
  reader(chainId: number): ChainReader | undefined {
    return this.#readers.get(chainId);
  }

  get chains(): readonly ChainReader[] {
    return [...this.#readers.values()];
  }

  /**
   * The product, checked against the chain (once per product definition).
   * @throws StoreUnavailableError when the product is refused or the chain cannot be read.
   */
  async verified(product: ProductRecord): Promise<VerifiedProduct> {
    const verdict = await this.#verdict(product);
    if (verdict.ok) return verdict.product;
    throw new StoreUnavailableError(
      `product ${product.slug} is refused: ${verdict.reason}`,
      REFUSED_RETRY_AFTER_SECONDS,
    );
  }

  /** Checks every product on a configured chain; products on other chains are left out. */
  async verifyProducts(products: Iterable<ProductRecord>): Promise<ProductCheck[]> {
    const onChain = [...products].filter((p) => this.#readers.has(p.chainId));
    return Promise.all(
      onChain.map(async (product): Promise<ProductCheck> => {
        const base = { slug: product.slug, partnerId: product.partnerId, chainId: product.chainId };
        try {
          const verdict = await this.#verdict(product);
          return verdict.ok
            ? { ...base, status: "ok" }
            : { ...base, status: "refused", reason: verdict.reason };
        } catch (error) {
          return { ...base, status: "unavailable", reason: rpcErrorReason(error) };
        }
      }),
    );
  }

  #verdict(product: ProductRecord): Promise<Verdict> {
    const reader = this.#readers.get(product.chainId);
    if (reader === undefined)
      return Promise.reject(
        new StoreUnavailableError(
          `no RPC URL is configured for chain ${product.chainId}`,
          REFUSED_RETRY_AFTER_SECONDS,
        ),
      );
    const key = [
      product.chainId,
      product.wrapperAddress,
      product.underlyingVaultAddress,
      product.assetAddress,
      product.assetDecimals,
      product.decimalsOffset,
    ]
      .join(":")
      .toLowerCase();
    let verdict = this.#verdicts.get(key);
    if (verdict === undefined) {
      verdict = checkProduct(reader, product).then((v) => {
        if (!v.ok) this.#log(`product ${product.slug} (${reader.name}) refused: ${v.reason}`);
        return v;
      });
      this.#verdicts.set(key, verdict);
      // An RPC failure is not a verdict: check again on the next request.
      verdict.catch(() => this.#verdicts.delete(key));
    }
    return verdict;
  }
}

async function checkProduct(reader: ChainReader, product: ProductRecord): Promise<Verdict> {
  const nodeChainId = await reader.nodeChainId();
  if (nodeChainId !== product.chainId)
    return {
      ok: false,
      reason: `the RPC node of ${reader.name} reports chain id ${nodeChainId}, the product says ${product.chainId}`,
    };
  const block = await reader.latestBlock();
  const wrapper = product.wrapperAddress as Address;
  const underlying = product.underlyingVaultAddress as Address;
  const asset = product.assetAddress as Address;
  const [assetDecimals, wrapperDecimals, wrapperAsset, underlyingDecimals, underlyingAsset] =
    await Promise.all([
      contractValue(reader, block, asset, "asset decimals()", (at) =>
        reader.client.readContract({
          address: asset,
          abi: erc20Abi,
          functionName: "decimals",
          blockHash: at,
        }),
      ),
      contractValue(reader, block, wrapper, "wrapper decimals()", (at) =>
        reader.client.readContract({
          address: wrapper,
          abi: erc20Abi,
          functionName: "decimals",
          blockHash: at,
        }),
      ),
      contractValue(reader, block, wrapper, "wrapper asset()", (at) =>
        reader.client.readContract({
          address: wrapper,
          abi: erc4626Abi,
          functionName: "asset",
          blockHash: at,
        }),
      ),
      contractValue(reader, block, underlying, "underlying vault decimals()", (at) =>
        reader.client.readContract({
          address: underlying,
          abi: erc20Abi,
          functionName: "decimals",
          blockHash: at,
        }),
      ),
      contractValue(reader, block, underlying, "underlying vault asset()", (at) =>
        reader.client.readContract({
          address: underlying,
          abi: erc4626Abi,
          functionName: "asset",
          blockHash: at,
        }),
      ),
    ]);
  const problems: string[] = [];
  for (const v of [assetDecimals, wrapperDecimals, wrapperAsset, underlyingDecimals, underlyingAsset])
    if (!v.ok) problems.push(v.reason);
  if (assetDecimals.ok && assetDecimals.value !== product.assetDecimals)
    problems.push(`asset decimals() is ${assetDecimals.value}, the product says ${product.assetDecimals}`);
  const shareDecimals = product.assetDecimals + product.decimalsOffset;
  if (wrapperDecimals.ok && wrapperDecimals.value !== shareDecimals)
    problems.push(
      `wrapper decimals() is ${wrapperDecimals.value}, the product says ${shareDecimals} (asset ${product.assetDecimals} + offset ${product.decimalsOffset})`,
    );
  if (wrapperAsset.ok && getAddress(wrapperAsset.value) !== getAddress(asset))
    problems.push(`the wrapper's asset() is ${getAddress(wrapperAsset.value)}, the product says ${asset}`);
  if (underlyingAsset.ok && getAddress(underlyingAsset.value) !== getAddress(asset))
    problems.push(
      `the underlying vault's asset() is ${getAddress(underlyingAsset.value)}, the product says ${asset}`,
    );
  if (problems.length > 0 || !underlyingDecimals.ok) return { ok: false, reason: problems.join("; ") };
  return { ok: true, product: { reader, underlyingShareDecimals: underlyingDecimals.value } };
}

type Value<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A read whose revert (or missing contract) is a finding about the product, not an outage. */
async function contractValue<T>(
  reader: ChainReader,
  block: BlockRef,
  address: Address,
  what: string,
  call: (blockHash: BlockRef["hash"]) => Promise<T>,
): Promise<Value<T>> {
  try {
    return {
      ok: true,
      value: await reader.read(block, `check:${address}:${what}`, what, () => call(block.hash)),
    };
  } catch (error) {
    const cause = error instanceof StoreUnavailableError ? error.cause : error;
    // Only a call the contract refused is a verdict; a node that failed stays an outage.
    if (error instanceof StoreUnavailableError && !isContractRefusal(cause)) throw error;
    return { ok: false, reason: `${what} at ${address} failed (${rpcErrorReason(cause)})` };
  }
}

/** The contract reverted, has no code, or answered something that does not decode as the ABI says. */
function isContractRefusal(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return (
    error.walk(
      (e) =>
        e instanceof ContractFunctionRevertedError ||
        e instanceof ContractFunctionZeroDataError ||
        e instanceof AbiDecodingDataSizeTooSmallError ||
        e instanceof AbiDecodingZeroDataError,
    ) !== null
  );
}
