/**
 * `serve --rpc-url …` / `--price-table …` / `--price-max-age …`: the sources of
 * @partner-yield/source-evm over the fixtures or PostgreSQL. Loaded with a dynamic import, so a
 * server without these flags never loads viem.
 * @module
 */
import type { PositionSource, PriceSource, ProductRecord, ProductSource } from "@partner-yield/core";
import {
  ChainMetricsProductSource,
  EvmChains,
  EvmPositionSource,
  type PriceAge,
  type PriceTable,
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
  /** The store's prices with their update times (PostgreSQL), served aged unless `--price-table`. */
  readonly priceTable?: (PriceTable & { ping(): Promise<void> }) | undefined;
}

export interface ChainSources {
  readonly products: ProductSource;
  readonly positions: PositionSource;
  readonly prices: PriceSource;
  /** Lines for the banner: where each source reads from, each product's check, each price's age. */
  readonly summary: readonly string[];
  /** `/readyz` checks: `chain_<name>` per chain (its node answers), `prices` (the table reads). */
  readonly readinessChecks: Readonly<Record<string, () => Promise<void>>>;
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
  const readinessChecks: Record<string, () => Promise<void>> = {};
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
    for (const reader of chains.chains) {
      summary.push(
        `  chain ${reader.name} (${reader.chainId}) at ${redactedUrl(config.rpcUrls.find((r) => r.chainId === reader.chainId)!.url)}: positions and metrics from chain, APY over ${reader.apyWindowBlocks} blocks`,
      );
      readinessChecks[`chain_${reader.name}`] = () => reader.checkNode();
    }
    for (const check of await chains.verifyProducts(data.productRecords)) {
      const line = `product ${check.slug} (${check.partnerId}): ${check.status}${check.reason === undefined ? "" : ` — ${check.reason}`}`;
      summary.push(`    ${line}`);
      if (check.status === "refused") log(`REFUSED ${line}`);
      if (check.status === "unavailable") log(`not checked yet, the node did not answer: ${line}`);
    }
  }
  let prices: PriceSource = data.prices;
  const aged = agedPriceTable(config, data);
  if (aged !== undefined) {
    const source = new TablePriceSource(aged.table, { maxAgeSeconds: config.priceMaxAgeSeconds, log });
    prices = source;
    readinessChecks["prices"] = aged.check;
    summary.push(`  prices from ${aged.where}, served up to ${config.priceMaxAgeSeconds} s old`);
    try {
      for (const age of await source.ages(data.productRecords)) summary.push(`    ${describeAge(age)}`);
    } catch (error) {
      log(`the price table cannot be read: ${(error as Error).message}`);
      summary.push(`    unreadable: ${(error as Error).message}`);
    }
  } else {
    summary.push(
      "  prices from the fixtures' prices.json (no update times; --price-table or --database-url adds them)",
    );
  }
  return { products, positions, prices, summary, readinessChecks };
}

/** `--price-table FILE` first, else the store's own table (PostgreSQL); the fixtures have none. */
function agedPriceTable(
  config: ChainServeConfig,
  data: BaseSources,
): { table: PriceTable; where: string; check: () => Promise<void> } | undefined {
  if (config.priceTable !== undefined) {
    const table = new FilePriceTable(config.priceTable);
    return { table, where: config.priceTable, check: () => table.load() };
  }
  const table = data.priceTable;
  if (table === undefined) return undefined;
  return { table, where: "PostgreSQL (table asset_prices)", check: () => table.ping() };
}

/** One banner line: the asset, whether its price is served, and how old it is. */
function describeAge(age: PriceAge): string {
  const asset = `${age.assetSymbol} (${age.assetAddress}) on chain ${age.chainId}`;
  switch (age.status) {
    case "fresh":
      return `${asset}: ${age.ageSeconds} s old, served`;
    case "stale":
      return `${asset}: ${age.ageSeconds} s old, STALE: positions holding it answer 503 until it is updated`;
    case "ahead":
      return `${asset}: dated ${-(age.ageSeconds ?? 0)} s in the future, REFUSED: positions holding it answer 503`;
    case "missing":
      return `${asset}: no price, positions holding it answer 503`;
  }
}

/** Scheme, host and port only: a provider's key often sits in the path or the query. */
function redactedUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname === "/" && u.search === "" ? "" : "/…"}`;
}
