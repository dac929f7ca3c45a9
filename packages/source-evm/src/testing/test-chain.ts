/**
 * Deploys and drives the test contracts on a local node (anvil's unlocked dev accounts sign):
 * an ERC-20 asset, OpenZeppelin ERC-4626 vaults, deposits, and yield as a plain transfer of
 * assets into a vault (its share price rises for every holder).
 * @module
 */
import {
  type Address,
  createPublicClient,
  createWalletClient,
  getAddress,
  type Hash,
  http,
  type PublicClient,
  type WalletClient,
} from "viem";
import { TEST_TOKEN_BYTECODE, TEST_VAULT_BYTECODE, testTokenAbi, testVaultAbi } from "./contracts.js";

export interface TestChain {
  readonly rpcUrl: string;
  readonly publicClient: PublicClient;
  readonly walletClient: WalletClient;
  /** anvil's unlocked dev accounts; the first deploys. */
  readonly accounts: readonly Address[];
  deployToken(args: { name: string; symbol: string; decimals: number }): Promise<Address>;
  deployVault(args: {
    asset: Address;
    name: string;
    symbol: string;
    decimalsOffset: number;
  }): Promise<Address>;
  mint(token: Address, to: Address, amount: bigint): Promise<void>;
  /** Approves and deposits `assets` from `from`; mints the assets first. */
  deposit(vault: Address, asset: Address, from: Address, assets: bigint): Promise<void>;
  /** Simulated yield: assets sent to the vault without shares in return. */
  addYield(vault: Address, asset: Address, amount: bigint): Promise<void>;
  /** Mines `blocks` empty blocks, `secondsPerBlock` apart (anvil_mine). */
  mine(blocks: number, secondsPerBlock: number): Promise<void>;
}

/**
 * @example
 * const chain = connectTestChain(node.rpcUrl);
 * const usdc = await chain.deployToken({ name: "USD Coin", symbol: "USDC", decimals: 6 });
 */
export async function connectTestChain(rpcUrl: string): Promise<TestChain> {
  const transport = http(rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ transport, pollingInterval: 20 });
  const walletClient = createWalletClient({ transport });
  const accounts = (await walletClient.getAddresses()).map((a) => getAddress(a));
  const deployer = accounts[0]!;
  const confirm = async (hash: Hash): Promise<`0x${string}` | null | undefined> => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
    return receipt.contractAddress;
  };
  const chain = null;
  const chainObject: TestChain = {
    rpcUrl,
    publicClient,
    walletClient,
    accounts,
    async deployToken({ name, symbol, decimals }) {
      const hash = await walletClient.deployContract({
        abi: testTokenAbi,
        bytecode: TEST_TOKEN_BYTECODE,
        args: [name, symbol, decimals],
        account: deployer,
        chain,
      });
      return getAddress((await confirm(hash))!);
    },
    async deployVault({ asset, name, symbol, decimalsOffset }) {
      const hash = await walletClient.deployContract({
        abi: testVaultAbi,
        bytecode: TEST_VAULT_BYTECODE,
        args: [asset, name, symbol, decimalsOffset],
        account: deployer,
        chain,
      });
      return getAddress((await confirm(hash))!);
    },
    async mint(token, to, amount) {
      await confirm(
        await walletClient.writeContract({
          address: token,
          abi: testTokenAbi,
          functionName: "mint",
          args: [to, amount],
          account: deployer,
          chain,
        }),
      );
    },
    async deposit(vault, asset, from, assets) {
      await chainObject.mint(asset, from, assets);
      await confirm(
        await walletClient.writeContract({
          address: asset,
          abi: testTokenAbi,
          functionName: "approve",
          args: [vault, assets],
          account: from,
          chain,
        }),
      );
      await confirm(
        await walletClient.writeContract({
          address: vault,
          abi: testVaultAbi,
          functionName: "deposit",
          args: [assets, from],
          account: from,
          chain,
        }),
      );
    },
    async addYield(vault, asset, amount) {
      await chainObject.mint(asset, vault, amount);
    },
    async mine(blocks, secondsPerBlock) {
      await publicClient.request({
        method: "anvil_mine" as never,
        params: [`0x${blocks.toString(16)}`, `0x${secondsPerBlock.toString(16)}`] as never,
      });
    },
  };
  return chainObject;
}
