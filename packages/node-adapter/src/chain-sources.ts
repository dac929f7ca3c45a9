/**
 * `serve --rpc-url …` / `--price-table …`: the sources of @partner-yield/source-evm over the
 * loaded fixtures. Loaded with a dynamic import, so a server without these flags never loads viem.
 * @module
 */
import type { PositionSource, PriceSource, ProductRecord, ProductSource } from "@partner-yield/core";
import {
  ChainMetricsProductSource,
  EvmChains,
  EvmPositionSource,
  TablePriceSource,
} from "@partner-yield/source-evm";
import { FilePriceTable } from "@partner-yield/source-evm/file-price-table";
import type { ChainServeConfig } from "./cli-options.js";

/** What the chain sources wrap: the products, positions and prices the server holds otherwise. */
export interface BaseSources {
  readonly products: ProductSource;
  readonly positions: PositionSource;
  readonly prices: PriceSource;
  /** Every product at start, checked against its chain. */
  readonly productRecords: readonly ProductRecord[];
}

export interface ChainSources {
  readonly products: ProductSource;
  readonly positions: PositionSource;
  readonly prices: PriceSource;
  /** Lines for the banner: where each source reads from, each product's check, each price's age. */
  readonly summary: readonly string[];
}

/**
 * Builds the sources and checks every product on a configured chain against it (decimals,
 * assets, chain id). A refused product stays refused (503) until the record or chain is fixed;
 * one that could not be checked (node unreachable) is checked again on its first request.
 */
export async function createChainSources(
  config: ChainServeConfig,
  data: BaseSources,
  log: (line: string) => void,
): Promise<ChainSources> {
  const summary: string[] = [];
  let products: ProductSource = data.products;
  let positions: PositionSource = data.positions;
  if (config.rpcUrls.length > 0) {
    const chains = new EvmChains(
      config.rpcUrls.map((r) => ({
        chainId: r.chainId,
        name: r.chain,
        rpcUrl: r.url,
        apyWindowBlocks: config.apyWindowBlocks,
      })),
      { log },
    );
    products = new ChainMetricsProductSource(data.products, chains);
    positions = new EvmPositionSource(chains, { otherChains: data.positions });
    for (const reader of chains.chains)
      summary.push(
        `  chain ${reader.name} (${reader.chainId}) at ${redactedUrl(config.rpcUrls.find((r) => r.chainId === reader.chainId)!.url)}: positions and metrics from chain, APY over ${reader.apyWindowBlocks} blocks`,
      );
    for (const check of await chains.verifyProducts(data.productRecords)) {
      const line = `product ${check.slug} (${check.partnerId}): ${check.status}${check.reason === undefined ? "" : ` — ${check.reason}`}`;
      summary.push(`    ${line}`);
      if (check.status === "refused") log(`REFUSED ${line}`);
      if (check.status === "unavailable") log(`not checked yet, the node did not answer: ${line}`);
    }
  }
  let prices: PriceSource = data.prices;
  if (config.priceTable !== undefined) {
    const table = new TablePriceSource(new FilePriceTable(config.priceTable), {
      maxAgeSeconds: config.priceMaxAgeSeconds,
    });
    prices = table;
    summary.push(`  prices from ${config.priceTable}, served up to ${config.priceMaxAgeSeconds} s old`);
    try {
      for (const age of await table.ages(data.productRecords.filter((p) => inScope(p.chainId, config))))
        summary.push(
          `    ${age.assetSymbol} on chain ${age.chainId}: ${age.status}${age.ageSeconds === undefined ? "" : ` (${age.ageSeconds} s old)`}`,
        );
    } catch (error) {
      log(`the price table cannot be read: ${(error as Error).message}`);
      summary.push(`    unreadable: ${(error as Error).message}`);
    }
  } else {
    summary.push("  prices from the fixtures' prices.json (no update times; --price-table adds them)");
  }
  return { products, positions, prices, summary };
}

function inScope(chainId: number, config: ChainServeConfig): boolean {
  return config.rpcUrls.length === 0 || config.rpcUrls.some((r) => r.chainId === chainId);
}

/** Scheme, host and port only: a provider's key often sits in the path or the query. */
function redactedUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname === "/" && u.search === "" ? "" : "/…"}`;
}
