/**
 * A `ProductSource` decorator: products on a configured chain get `latest_metrics` read from the
 * chain at the latest block, over any product source (in-memory fixtures, PostgreSQL, …):
 * - `wrapper_total_assets`: the wrapper's `totalAssets()`;
 * - `underlying_apy`: from the underlying vault's share price now and `apyWindowBlocks` earlier
 *   (share-price-apy.ts; net APY then follows from the core's fee math as for any product);
 * - `as_of_date`: the UTC date of the latest block.
 * Products on other chains pass through unchanged. A chain that cannot be read makes the answer
 * 503 (StoreUnavailableError): the stored metrics are never shown in place of current ones.
 * @module
 */
import type { ProductMetrics, ProductRecord, ProductSource } from "@partner-yield/core";
import { type Address, erc4626Abi } from "viem";
import type { BlockRef, ChainReader } from "./chain-reader.js";
import type { EvmChains } from "./evm-chains.js";
import { sharePriceApy, sharePriceProbe } from "./share-price-apy.js";

/**
 * @example
 * const products = new ChainMetricsProductSource(fixtures.products, chains);
 * (await products.getProduct("northwind", "usdc-base-prime"))?.metrics?.underlyingApyWad;
 */
export class ChainMetricsProductSource implements ProductSource {
  readonly #base: ProductSource;
  readonly #chains: EvmChains;

  constructor(base: ProductSource, chains: EvmChains) {
    this.#base = base;
    this.#chains = chains;
  }

  async listProducts(partnerId: string): Promise<readonly ProductRecord[]> {
    const products = await this.#base.listProducts(partnerId);
    return Promise.all(products.map((p) => this.#withChainMetrics(p)));
  }

  async getProduct(partnerId: string, slug: string): Promise<ProductRecord | undefined> {
    const product = await this.#base.getProduct(partnerId, slug);
    return product === undefined ? undefined : this.#withChainMetrics(product);
  }

  /** Closes the decorated source when it can be closed (the API closes its sources on shutdown). */
  async close(): Promise<void> {
    const base = this.#base as Partial<{ close(): Promise<void> | void }>;
    if (typeof base.close === "function") await base.close();
  }

  async #withChainMetrics(product: ProductRecord): Promise<ProductRecord> {
    if (this.#chains.reader(product.chainId) === undefined) return product;
    const { reader, underlyingShareDecimals } = await this.#chains.verified(product);
    const head = await reader.latestBlock();
    const metrics = await readMetrics(reader, head, product, sharePriceProbe(underlyingShareDecimals));
    return { ...product, metrics };
  }
}

/** Metrics at `head`, or null while the chain is younger than the APY window or the price is 0. */
async function readMetrics(
  reader: ChainReader,
  head: BlockRef,
  product: ProductRecord,
  probe: bigint,
): Promise<ProductMetrics | null> {
  const window = BigInt(reader.apyWindowBlocks);
  if (head.number < window) return null;
  const wrapper = product.wrapperAddress as Address;
  const start = reader.blockByNumber(head.number - window, head);
  const [totalAssets, priceEnd, priceStart, startBlock] = await Promise.all([
    reader.read(head, `totalAssets:${wrapper}`.toLowerCase(), "wrapper totalAssets()", (client, at) =>
      client.readContract({
        address: wrapper,
        abi: erc4626Abi,
        functionName: "totalAssets",
        blockHash: at.hash,
      }),
    ),
    sharePrice(reader, head, product.underlyingVaultAddress as Address, probe),
    start.then((block) => sharePrice(reader, block, product.underlyingVaultAddress as Address, probe)),
    start,
  ]);
  if (priceStart === 0n || startBlock.timestamp >= head.timestamp) return null;
  return {
    asOfDate: new Date(Number(head.timestamp) * 1000).toISOString().slice(0, 10),
    wrapperTotalAssets: totalAssets,
    underlyingApyWad: sharePriceApy(priceStart, priceEnd, head.timestamp - startBlock.timestamp),
  };
}

function sharePrice(reader: ChainReader, block: BlockRef, vault: Address, probe: bigint): Promise<bigint> {
  return reader.read(
    block,
    `sharePrice:${vault}:${probe}`.toLowerCase(),
    "underlying convertToAssets()",
    (client, at) =>
      client.readContract({
        address: vault,
        abi: erc4626Abi,
        functionName: "convertToAssets",
        args: [probe],
        blockHash: at.hash,
      }),
  );
}
