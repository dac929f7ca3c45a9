/**
 * `pnpm chain:demo`: a local chain for trying `partner-yield serve --rpc-url`. Starts anvil
 * (chain id 8453, standing in for Base) on 127.0.0.1:8545, deploys a USDC-like asset, an
 * underlying ERC-4626 vault and the product's wrapper, deposits from three wallets, simulates
 * about 5 % APY, and writes a fixtures directory whose one product is that wrapper, plus a price
 * table it refreshes every 30 s (a stand-in for a price feed). Ctrl-C stops the chain; its state
 * is kept, and running the script again resumes it.
 *
 *   pnpm chain:demo [--port 8545] [--dir .scratch/chain-demo]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Address } from "viem";
import { connectTestChain, startAnvil } from "../src/testing/index.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const CHAIN_ID = 8453;
const APY_WINDOW_BLOCKS = 600;
const SECONDS_PER_BLOCK = 2;
const USDC = 10n ** 6n;
const SLUG = "usdc-base-demo";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8545" },
    dir: { type: "string", default: join(REPO, ".scratch", "chain-demo") },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help === true) {
  process.stdout.write(
    "pnpm chain:demo [--port 8545] [--dir .scratch/chain-demo]\n" +
      "  a local anvil chain with a demo ERC-4626 product, for `partner-yield serve --rpc-url`\n",
  );
  process.exit(0);
}
const dir = resolve(values.dir);
await mkdir(dir, { recursive: true });
const stateFile = join(dir, "anvil-state.json");
const deploymentFile = join(dir, "deployment.json");

const node = await startAnvil({ chainId: CHAIN_ID, port: Number(values.port), stateFile }).catch(
  (error: Error) => {
    process.stderr.write(`chain:demo: cannot start anvil on port ${values.port}: ${error.message}\n`);
    process.exit(1);
  },
);
const chain = await connectTestChain(node.rpcUrl);

interface Deployment {
  asset: Address;
  underlying: Address;
  wrapper: Address;
  wallets: Address[];
}

async function deployed(): Promise<Deployment | undefined> {
  if (!existsSync(deploymentFile)) return undefined;
  const previous = JSON.parse(readFileSync(deploymentFile, "utf8")) as Deployment;
  const code = await chain.publicClient.getCode({ address: previous.wrapper });
  return code === undefined || code === "0x" ? undefined : previous;
}

let deployment = await deployed();
if (deployment === undefined) {
  process.stdout.write("deploying the demo asset and vaults…\n");
  const asset = await chain.deployToken({ name: "USD Coin (demo)", symbol: "USDC", decimals: 6 });
  const underlying = await chain.deployVault({
    asset,
    name: "Prime USDC",
    symbol: "pUSDC",
    decimalsOffset: 12,
  });
  const wrapper = await chain.deployVault({
    asset,
    name: "Northwind USDC",
    symbol: "nwUSDC",
    decimalsOffset: 12,
  });
  const wallets = chain.accounts.slice(1, 4) as Address[];
  await chain.deposit(underlying, asset, chain.accounts[4]!, 5_000_000n * USDC);
  for (const [i, amount] of [1_000n * USDC, 250_500_000n, 3_333_333n].entries())
    await chain.deposit(wrapper, asset, wallets[i]!, amount);
  await chain.mine(APY_WINDOW_BLOCKS, SECONDS_PER_BLOCK);
  // 5 % a year over the window, as a transfer into each vault.
  const windowSeconds = BigInt(APY_WINDOW_BLOCKS * SECONDS_PER_BLOCK);
  await chain.addYield(underlying, asset, (5_000_000n * USDC * 5n * windowSeconds) / (100n * 31_536_000n));
  await chain.addYield(wrapper, asset, 1_234_567n);
  await chain.mine(1, SECONDS_PER_BLOCK);
  deployment = { asset, underlying, wrapper, wallets };
  writeFileSync(deploymentFile, `${JSON.stringify(deployment, null, 2)}\n`);
} else {
  process.stdout.write(`resumed the chain from ${relative(REPO, stateFile)}\n`);
}

const fixtures = join(REPO, "fixtures");
writeFileSync(join(dir, "partners.json"), readFileSync(join(fixtures, "partners.json")));
writeFileSync(join(dir, "vaults.json"), "[]\n");
writeFileSync(join(dir, "prices.json"), "[]\n");
writeFileSync(
  join(dir, "products.json"),
  `${JSON.stringify(
    [
      {
        partner_id: "northwind",
        slug: SLUG,
        chain: "base",
        chain_id: CHAIN_ID,
        wrapper_address: deployment.wrapper,
        underlying_vault_address: deployment.underlying,
        asset_address: deployment.asset,
        asset_symbol: "USDC",
        asset_decimals: 6,
        decimals_offset: 12,
        status: "active",
        service_fee_bps: 50,
        partner_fee_bps: 100,
        display_name: "USDC on a local chain",
        description: "The chain:demo vault: positions and metrics read from anvil.",
        metrics: null,
      },
    ],
    null,
    2,
  )}\n`,
);
const priceTable = join(dir, "price-table.json");
const writePrices = () =>
  writeFileSync(
    priceTable,
    `${JSON.stringify([{ chain_id: CHAIN_ID, asset_address: deployment.asset, usd_price: "0.9998", updated_at: new Date().toISOString() }])}\n`,
  );
writePrices();
const feed = setInterval(writePrices, 30_000);

const rel = (p: string) => relative(REPO, p) || ".";
process.stdout.write(
  [
    "",
    `chain:demo: anvil at ${node.rpcUrl} (chain id ${CHAIN_ID}, standing in for base)`,
    `  product ${SLUG}: wrapper ${deployment.wrapper}, underlying vault ${deployment.underlying}, asset ${deployment.asset}`,
    `  wallets with positions: ${deployment.wallets.join(", ")}`,
    `  fixtures in ${rel(dir)}; USD price refreshed every 30 s in ${rel(priceTable)}`,
    "",
    "In another terminal, from the repository root:",
    `  npx -y pnpm@10 serve --fixtures ${rel(dir)} --rpc-url base=${node.rpcUrl} --price-table ${rel(priceTable)} --apy-window-blocks ${APY_WINDOW_BLOCKS}`,
    `  curl -s -H "X-Api-Key: ypk_test_p5uYqWuTm2niNkMzdEPWdUA45x3OkztF4Y5kDE" "http://127.0.0.1:8787/api/partner/products/${SLUG}/position?address=${deployment.wallets[0]}"`,
    "",
    "Ctrl-C stops the chain (state kept; run again to resume).",
    "",
  ].join("\n"),
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  clearInterval(feed);
  process.stdout.write("chain:demo: stopping anvil (saving its state)…\n");
  void node.stop().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
node.process.once("exit", () => {
  if (!stopping) {
    process.stderr.write("chain:demo: anvil exited\n");
    process.exit(1);
  }
});
