/**
 * @partner-yield/source-evm — positions, vault metrics and prices for `@partner-yield/core`
 * from ERC-4626 wrappers on EVM chains, read with viem.
 * @module
 */
export { BlockCache } from "./block-cache.js";
export { ChainMetricsProductSource } from "./chain-metrics.js";
export {
  type BlockRef,
  ChainReader,
  DEFAULT_APY_WINDOW_BLOCKS,
  DEFAULT_RPC_READ_OPTIONS,
  type EvmChainConfig,
  type RpcReadOptions,
} from "./chain-reader.js";
export { EvmChains, type EvmChainsOptions, type ProductCheck, type VerifiedProduct } from "./evm-chains.js";
export { EvmPositionSource, type EvmPositionSourceOptions } from "./evm-position-source.js";
export { readPosition } from "./position-lens.js";
export {
  MemoryPriceTable,
  type PriceRow,
  type PriceTable,
  type PriceTableEntry,
  PriceTableError,
  parsePriceTable,
} from "./price-table.js";
export { isTransientRpcError } from "./rpc-errors.js";
export { MIN_APY_WAD, SECONDS_PER_YEAR, sharePriceApy, sharePriceProbe } from "./share-price-apy.js";
export {
  type PriceAge,
  TablePriceSource,
  type TablePriceSourceOptions,
} from "./table-price-source.js";
