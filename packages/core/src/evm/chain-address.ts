/**
 * An address on a chain as a map key: the same contract on another chain is another key, and the
 * hex case of the address does not matter.
 * @example chainAddressKey(8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"); // "8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
 */
export function chainAddressKey(chainId: number, address: string): string {
  return `${chainId}:${address.toLowerCase()}`;
}
