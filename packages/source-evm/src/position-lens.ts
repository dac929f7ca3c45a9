/**
 * A wallet's shares and the assets they convert to, read in ONE `eth_call` at ONE block.
 *
 * `convertToAssets(shares)` needs the result of `balanceOf(wallet)`, which a Multicall3 batch
 * cannot pass from one call to the next (and Multicall3 is not on every node, anvil included).
 * So the read runs a small lens contract (contracts/PositionLens.sol) through `eth_call` without
 * deploying it — viem's deployless read — which calls both in one EVM execution: shares and
 * assets always come from the same state, and the vault's own `convertToAssets` answers
 * (CONTRACT §2: where the vault can be asked, its answer wins).
 * @module
 */
import type { Holding } from "@partner-yield/core";
import type { Address } from "viem";
import type { BlockRef, ChainReader } from "./chain-reader.js";
import { POSITION_LENS_BYTECODE, positionLensAbi } from "./position-lens-artifact.js";

/**
 * @example const { shares, assets } = await readPosition(reader, await reader.latestBlock(), wrapper, wallet);
 */
export async function readPosition(
  reader: ChainReader,
  block: BlockRef,
  wrapper: Address,
  wallet: Address,
): Promise<Holding> {
  const [shares, assets] = await reader.read(
    block,
    `position:${wrapper}:${wallet}`.toLowerCase(),
    "balanceOf + convertToAssets",
    (client, at) =>
      client.readContract({
        code: POSITION_LENS_BYTECODE,
        abi: positionLensAbi,
        functionName: "position",
        args: [wrapper, wallet],
        blockHash: at.hash,
      }),
  );
  return { shares, assets };
}
