/**
 * Test support for `serve --rpc-url`: a real anvil node (chain id 8453, standing in for Base) with
 * a USDC-like asset, an underlying vault and the product's OpenZeppelin ERC-4626 wrapper, two
 * wallets holding shares and some yield; and a fixtures directory whose products are that wrapper.
 */
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AnvilNode,
  connectTestChain,
  startAnvil,
  type TestChain,
  testVaultAbi,
} from "@partner-yield/source-evm/testing";
import type { Address } from "viem";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
export const BASE = 8453;

export interface ChainProduct {
  node: AnvilNode;
  chain: TestChain;
  readonly asset: Address;
  readonly underlying: Address;
  readonly wrapper: Address;
  /** Two wallets with shares in the wrapper. */
  readonly wallets: readonly Address[];
  /** Anvil's state file: `startAnvil({ …, stateFile })` resumes the chain after a stop. */
  readonly stateFile: string;
}

/** Starts anvil (state kept in `dir`) and deploys the product; stop `node` after the tests. */
export async function deployChainProduct(dir: string): Promise<ChainProduct> {
  const stateFile = join(dir, "anvil-state.json");
  const node = await startAnvil({ chainId: BASE, stateFile });
  const chain = await connectTestChain(node.rpcUrl);
  const asset = await chain.deployToken({ name: "USD Coin", symbol: "USDC", decimals: 6 });
  const underlying = await chain.deployVault({ asset, name: "Prime", symbol: "p", decimalsOffset: 12 });
  const wrapper = await chain.deployVault({ asset, name: "Wrapper", symbol: "w", decimalsOffset: 12 });
  const wallets = chain.accounts.slice(1, 3) as Address[];
  await chain.deposit(wrapper, asset, wallets[0]!, 1_500_000_000n);
  await chain.deposit(wrapper, asset, wallets[1]!, 77_777_777n);
  await chain.addYield(wrapper, asset, 3_141_593n);
  return { node, chain, asset, underlying, wrapper, wallets, stateFile };
}

/** A product of the demo partner (northwind) on the deployed wrapper. */
export function productRow(slug: string, deployed: ChainProduct, decimalsOffset: number) {
  return {
    partner_id: "northwind",
    slug,
    chain: "base",
    chain_id: BASE,
    wrapper_address: deployed.wrapper,
    underlying_vault_address: deployed.underlying,
    asset_address: deployed.asset,
    asset_symbol: "USDC",
    asset_decimals: 6,
    decimals_offset: decimalsOffset,
    status: "active",
    service_fee_bps: 50,
    partner_fee_bps: 100,
    display_name: slug,
    description: "",
    metrics: null,
  };
}

/**
 * Writes a fixtures directory: the repository's partners (with the demo keys), `products`, no
 * vault holdings, and `prices` (`[chain_id, asset_address, usd_price]` rows, no update times).
 */
export function writeChainFixtures(
  dir: string,
  products: readonly ReturnType<typeof productRow>[],
  prices: readonly { chain_id: number; asset_address: string; usd_price: string }[] = [],
): void {
  copyFileSync(join(REPO, "fixtures", "partners.json"), join(dir, "partners.json"));
  writeFileSync(join(dir, "vaults.json"), "[]");
  writeFileSync(join(dir, "prices.json"), JSON.stringify(prices));
  writeFileSync(join(dir, "products.json"), JSON.stringify(products));
}

/** A view function of the wrapper, read from the node directly (not through the API). */
export async function readWrapper(
  deployed: ChainProduct,
  functionName: string,
  args: unknown[],
): Promise<bigint> {
  return (await deployed.chain.publicClient.readContract({
    address: deployed.wrapper,
    abi: testVaultAbi,
    functionName,
    args,
  } as never)) as bigint;
}

/** The base units of a canonical decimal string with `decimals` fractional digits. */
export function toUnits(decimal: string, decimals: number): bigint {
  const [int, frac = ""] = decimal.split(".");
  return BigInt(int! + frac.padEnd(decimals, "0"));
}
