/**
 * `partner-yield serve --database-url … --rpc-url …` as an operator runs it (child processes),
 * against a real anvil node and PostgreSQL: the fixtures imported with `db import-fixtures`,
 * positions read from the chain, prices from the `asset_prices` table with their age in the banner;
 * a price dated past `--price-max-age` answered 503 (logged once on stderr), one SQL UPDATE served
 * on the next request; `/readyz` naming the chain's node and the price table, without their URLs.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { DEMO, gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import {
  BASE,
  type ChainProduct,
  deployChainProduct,
  productRow,
  readWrapper,
  toUnits,
  writeChainFixtures,
} from "./chain-setup.js";
import { runCli, type ServerProcess, startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("serve", { prefix: "py_evm2_" }) : undefined;

const SLUG = "usdc-chain";
const MAX_AGE = 600;
let dir: string | undefined;
let deployed: ChainProduct | undefined;
let server: ServerProcess | undefined;

async function position(wallet: string) {
  const res = await fetch(`${server!.url}/api/partner/products/${SLUG}/position?address=${wallet}`, {
    headers: { "x-api-key": DEMO.sandboxApiKey },
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as any };
}

async function readiness() {
  const res = await fetch(`${server!.url}/readyz`);
  const text = await res.text();
  return {
    status: res.status,
    text,
    body: JSON.parse(text) as { status: string; stores: Record<string, string> },
  };
}

/** The price row of the deployed asset, changed with one SQL statement as an operator would. */
function updatePrice(set: string) {
  return db!.pool.query(`update asset_prices set ${set} where chain_id = $1 and asset_address = lower($2)`, [
    BASE,
    deployed!.asset,
  ]);
}

/** usd_value in cents: floor(assets × price), the asset having 6 decimals. */
function cents(assets: bigint, priceMillionths: bigint): bigint {
  return (assets * priceMillionths * 100n) / 10n ** 12n;
}

if (available) {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "py-evm2-chain-pg-"));
    deployed = await deployChainProduct(dir);
    writeChainFixtures(
      dir,
      [productRow(SLUG, deployed, 12)],
      [{ chain_id: BASE, asset_address: deployed.asset, usd_price: "0.9998" }],
    );
    const imported = await runCli(["db", "import-fixtures", dir, "--database-url", db!.url]);
    assert.equal(imported.code, 0, imported.stderr);
    server = await startServerProcess([
      "--database-url",
      db!.url,
      "--rpc-url",
      `base=${deployed.node.rpcUrl}`,
      "--price-max-age",
      String(MAX_AGE),
      "--apy-window-blocks",
      "5",
    ]);
  });

  after(async () => {
    await server?.stop("SIGTERM");
    await deployed?.node.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
}

describe("serve --database-url --rpc-url: positions from chain, aged prices from PostgreSQL", () => {
  test("positions are the vault's own numbers, valued at the table's price; the banner gives its age", async () => {
    const d = deployed!;
    assert.match(server!.banner, /data and events: PostgreSQL /);
    assert.match(
      server!.banner,
      /chain base \(8453\) at http:\/\/127\.0\.0\.1:\d+: positions and metrics from chain/,
    );
    assert.match(server!.banner, /prices from PostgreSQL \(table asset_prices\), served up to 600 s old/);
    assert.match(server!.banner, new RegExp(`USDC \\(${d.asset}\\) on chain 8453: \\d+ s old, served`));
    for (const wallet of d.wallets) {
      const res = await position(wallet);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const shares = await readWrapper(d, "balanceOf", [wallet]);
      const assets = await readWrapper(d, "convertToAssets", [shares]);
      assert.equal(toUnits(res.body.data.shares, 18), shares);
      assert.equal(toUnits(res.body.data.assets, 6), assets);
      assert.equal(toUnits(res.body.data.usd_value, 2), cents(assets, 999_800n));
    }
  });

  test("/readyz names the chain's node and the price table next to the stores, and no URL", async () => {
    const ready = await readiness();
    assert.equal(ready.status, 200, ready.text);
    assert.deepEqual(ready.body.stores, {
      events: "ok",
      keys: "ok",
      partners: "ok",
      products: "ok",
      positions: "ok",
      prices: "ok",
      rate_limits: "ok",
      chain_base: "ok",
    });
    assert.ok(!ready.text.includes("127.0.0.1") && !ready.text.includes("postgres"), ready.text);
  });

  test("a price older than --price-max-age is 503 with Retry-After (one stderr line); one UPDATE → 200 on the next request", async () => {
    const wallet = deployed!.wallets[0]!;
    await updatePrice("updated_at = now() - interval '1 hour'");
    for (let i = 0; i < 3; i++) {
      const stale = await position(wallet);
      assert.equal(stale.status, 503);
      assert.equal(stale.body.code, "service_unavailable");
      assert.equal(stale.retryAfter, "30");
      assert.ok(!JSON.stringify(stale.body).includes("usd_value"), "no value from a stale price");
    }
    const refusals = server!
      .output()
      .stderr.match(/refused: the USD price of USDC on chain 8453 is \d+ s old \(at most 600 s is served\)/g);
    assert.equal(refusals?.length, 1, server!.output().stderr);
    // A stale price is the data's problem, not this instance's: it stays in the load balancer.
    assert.equal((await readiness()).status, 200);

    await updatePrice("usd_price = 1.25, updated_at = now()");
    const fresh = await position(wallet);
    assert.equal(fresh.status, 200);
    const assets = toUnits(fresh.body.data.assets, 6);
    assert.equal(toUnits(fresh.body.data.usd_value, 2), cents(assets, 1_250_000n));
    assert.match(
      server!.output().stderr,
      /the USD price of USDC on chain 8453 is served again \(\d+ s old\)/,
    );
  });

  // Shared by every instance: reported, never a reason to leave the load balancer (still 200).
  test("/readyz reports (degraded, still 200) the price table when it cannot be read, and the chain when its node is down", async () => {
    await db!.pool.query("alter table asset_prices rename to asset_prices_away");
    try {
      const unreadable = await readiness();
      assert.equal(unreadable.status, 200);
      assert.equal(unreadable.body.status, "degraded");
      assert.equal(unreadable.body.stores["prices"], "unavailable");
      assert.equal(unreadable.body.stores["events"], "ok");
      assert.equal(unreadable.body.stores["chain_base"], "ok");
      assert.equal((await position(deployed!.wallets[0]!)).status, 503);
    } finally {
      await db!.pool.query("alter table asset_prices_away rename to asset_prices");
    }
    assert.equal((await readiness()).status, 200);

    await deployed!.node.stop();
    const down = await readiness();
    assert.equal(down.status, 200);
    assert.equal(down.body.status, "degraded");
    assert.equal(down.body.stores["chain_base"], "unavailable");
    assert.equal(down.body.stores["prices"], "ok");
    assert.ok(!down.text.includes("127.0.0.1"), down.text);
  });
});
