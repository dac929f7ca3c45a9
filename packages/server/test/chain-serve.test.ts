/**
 * `partner-yield serve --rpc-url base=…` as a user runs it (a child process), against a real
 * anvil node with an OpenZeppelin ERC-4626 wrapper: positions match the vault's own
 * `convertToAssets`, a product whose decimals disagree is refused, and the node killed mid-test
 * gives 503 with Retry-After, then answers again once it is back.
 */
import assert from "node:assert/strict";
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { DEMO, sleep } from "@partner-yield/node-adapter/testing";
import { startAnvil } from "@partner-yield/source-evm/testing";
import { SCRIPT_END } from "../src/banner.js";
import {
  BASE,
  type ChainProduct,
  deployChainProduct,
  productRow,
  readWrapper,
  toUnits,
  writeChainFixtures,
} from "./chain-setup.js";
import { cliArgs, cliEnv } from "./cli-command.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

let dir: string;
let deployed: ChainProduct;
let server: { child: ChildProcessByStdio<null, Readable, Readable>; url: string; stderr: () => string };

async function startServer(args: string[]) {
  const child = spawn(process.execPath, cliArgs(["serve", "--port", "0", "--log", "none", ...args]), {
    cwd: REPO,
    env: cliEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const deadline = Date.now() + 30_000;
  while (!stdout.includes(SCRIPT_END)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no banner: ${stdout}\n${stderr}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const url = /serving \w+ at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!;
  return { child, url, banner: stdout, stderr: () => stderr };
}

async function position(slug: string, wallet: string) {
  const res = await fetch(`${server.url}/api/partner/products/${slug}/position?address=${wallet}`, {
    headers: { "x-api-key": DEMO.sandboxApiKey },
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as any };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "server-chain-"));
  deployed = await deployChainProduct(dir);
  writeChainFixtures(dir, [
    productRow("usdc-chain", deployed, 12),
    productRow("usdc-wrong-offset", deployed, 0),
  ]);
  writeFileSync(
    join(dir, "price-table.json"),
    JSON.stringify([
      { chain_id: BASE, asset_address: deployed.asset, usd_price: "1", updated_at: new Date().toISOString() },
    ]),
  );
  server = await startServer([
    "--fixtures",
    dir,
    "--rpc-url",
    `base=${deployed.node.rpcUrl}`,
    "--price-table",
    join(dir, "price-table.json"),
    "--apy-window-blocks",
    "5",
  ]);
});

after(async () => {
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill("SIGTERM");
    await new Promise((resolve) => server.child.once("close", resolve));
  }
  await deployed?.node.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test("positions are the vault's own balanceOf and convertToAssets; a decimals mismatch is refused loudly", async () => {
  for (const wallet of deployed.wallets) {
    const res = await position("usdc-chain", wallet.toLowerCase());
    assert.equal(res.status, 200);
    const shares = await readWrapper(deployed, "balanceOf", [wallet]);
    const assets = await readWrapper(deployed, "convertToAssets", [shares]);
    assert.ok(shares > 0n);
    assert.equal(toUnits(res.body.data.shares, 18), shares);
    assert.equal(toUnits(res.body.data.assets, 6), assets);
    assert.equal(toUnits(res.body.data.usd_value, 2), assets / 10_000n);
  }
  assert.match(
    server.stderr(),
    /REFUSED product usdc-wrong-offset .*wrapper decimals\(\) is 18, the product says 6/,
  );
  const refused = await position("usdc-wrong-offset", deployed.wallets[0]!);
  assert.equal(refused.status, 503);
});

test("the node killed mid-run: 503 with Retry-After; back: answers from the chain again", async () => {
  const before = await position("usdc-chain", deployed.wallets[0]!);
  assert.equal(before.status, 200);
  await deployed.node.stop();
  // The latest block is reused for up to a second (the short cache): within it the answer is the
  // block just read; after it, the node must be asked, and its absence is a 503.
  let down = await position("usdc-chain", deployed.wallets[0]!);
  const deadline = Date.now() + 20_000;
  while (down.status === 200 && Date.now() < deadline) {
    assert.deepEqual(down.body, before.body);
    await sleep(100);
    down = await position("usdc-chain", deployed.wallets[0]!);
  }
  assert.equal(down.status, 503);
  assert.equal(down.body.code, "service_unavailable");
  assert.ok(Number(down.retryAfter) > 0);
  deployed.node = await startAnvil({
    chainId: BASE,
    port: deployed.node.port,
    stateFile: deployed.stateFile,
  });
  const back = await position("usdc-chain", deployed.wallets[0]!);
  assert.equal(back.status, 200);
  assert.deepEqual(back.body, before.body);
});
