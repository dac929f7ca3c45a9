/**
 * The EVM chain registry (CONTRACT §8): chain name ↔ chain id. Extendable by passing a larger
 * registry to the fixture loader.
 */
export const EVM_CHAINS: Readonly<Record<string, number>> = Object.freeze({
  ethereum: 1,
  optimism: 10,
  bsc: 56,
  polygon: 137,
  base: 8453,
  arbitrum: 42161,
  avalanche: 43114,
});
