/**
 * Against a real local node (anvil from the npm package): OpenZeppelin ERC-4626 vaults with and
 * without a decimals offset, deposits from several wallets, yield as a plain transfer into the
 * vault. The API's answers (createPartnerApi + these sources) are compared with the contracts'
 * own `convertToAssets`, read here independently; then the node is killed and restarted.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  createPartnerApi,
  generateApiKey,
  hashApiKey,
  MemoryKeyStore,
  MemoryPartnerStore,
  MemoryProductSource,
  type ProductRecord,
  StoreUnavailableError,
} from "@partner-yield/core";
import {
  ChainMetricsProductSource,
  ChainReader,
  EvmChains,
  EvmPositionSource,
  MemoryPriceTable,
  TablePriceSource,
} from "@partner-yield/source-evm";
import {
  type AnvilNode,
  connectTestChain,
  startAnvil,
  type TestChain,
  testVaultAbi,
} from "@partner-yield/source-evm/testing";
import type { Address } from "viem";

const BASE = 8453;
const WINDOW = 10;
const USDC = 10n ** 6n;

let node: AnvilNode;
let chain: TestChain;
let stateDir: string;
const addr = {} as Record<"usdc" | "underlying" | "plain" | "prime", Address>;
let wallets: Address[];
let clockMs = Date.now();
const key = generateApiKey("sandbox");
const otherKey = generateApiKey("sandbox");
let api: ReturnType<typeof createPartnerApi>;
let chains: EvmChains;

function product(slug: string, partnerId: string, wrapper: Address, decimalsOffset: number): ProductRecord {
  return {
    partnerId,
    slug,
    chain: "base",
    chainId: BASE,
    wrapperAddress: wrapper,
    underlyingVaultAddress: addr.underlying,
    assetAddress: addr.usdc,
    assetSymbol: "USDC",
    assetDecimals: 6,
    decimalsOffset,
    status: "active",
    serviceFeeBps: 50,
    partnerFeeBps: 100,
    displayName: slug,
    description: "",
    // Stored metrics the chain must replace (never shown while the chain is read).
    metrics: { asOfDate: "2000-01-01", wrapperTotalAssets: 1n, underlyingApyWad: 1n },
  };
}

async function get(path: string, query = "", apiKey = key) {
  const res = await api.handle({
    method: "GET",
    path,
    query,
    headers: { "x-api-key": apiKey },
    clientAddress: "127.0.0.1",
  });
  return { status: res.status, headers: res.headers, body: JSON.parse(res.body ?? "null") };
}

async function onChain<T>(
  address: Address,
  functionName: string,
  args: unknown[],
  blockNumber?: bigint,
): Promise<T> {
  return (await chain.publicClient.readContract({
    address,
    abi: testVaultAbi,
    functionName,
    args,
    ...(blockNumber === undefined ? {} : { blockNumber }),
  } as never)) as T;
}

function formatUnits(value: bigint, decimals: number): string {
  const s = value.toString().padStart(decimals + 1, "0");
  const int = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, "");
  return frac === "" ? int : `${int}.${frac}`;
}

before(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "source-evm-chain-"));
  node = await startAnvil({ chainId: BASE, stateFile: join(stateDir, "state.json") });
  chain = await connectTestChain(node.rpcUrl);
  wallets = chain.accounts.slice(1, 4) as Address[];
  addr.usdc = await chain.deployToken({ name: "USD Coin", symbol: "USDC", decimals: 6 });
  addr.underlying = await chain.deployVault({
    asset: addr.usdc,
    name: "Prime USDC",
    symbol: "pUSDC",
    decimalsOffset: 12,
  });
  addr.plain = await chain.deployVault({
    asset: addr.usdc,
    name: "Plain wrapper",
    symbol: "wUSDC",
    decimalsOffset: 0,
  });
  addr.prime = await chain.deployVault({
    asset: addr.usdc,
    name: "Prime wrapper",
    symbol: "wpUSDC",
    decimalsOffset: 12,
  });
  const amounts = [1000n * USDC, 250_500_000n, 3_333_333n];
  for (const [i, wallet] of wallets.entries()) {
    await chain.deposit(addr.plain, addr.usdc, wallet, amounts[i]!);
    await chain.deposit(addr.prime, addr.usdc, wallet, amounts[i]!);
  }
  await chain.deposit(addr.underlying, addr.usdc, wallets[0]!, 5000n * USDC);
  // Yield that does not divide evenly, so rounding shows.
  await chain.addYield(addr.plain, addr.usdc, 1_234_567n);
  await chain.addYield(addr.prime, addr.usdc, 7_654_321n);
  await chain.mine(WINDOW * 2, 2);
  await chain.addYield(addr.underlying, addr.usdc, 1_000_003n);
  await chain.mine(1, 2);

  chains = new EvmChains([{ chainId: BASE, name: "base", rpcUrl: node.rpcUrl, apyWindowBlocks: WINDOW }], {
    latestBlockMaxAgeMs: 0,
    retries: 1,
    retryBaseDelayMs: 10,
    timeoutMs: 2000,
  });
  const records = [
    product("usdc-plain", "p1", addr.plain, 0),
    product("usdc-prime", "p1", addr.prime, 12),
    product("usdc-wrong-offset", "p2", addr.plain, 12),
  ];
  api = createPartnerApi({
    environment: "sandbox",
    partners: new MemoryPartnerStore([
      { id: "p1", name: "P1", signingSecrets: [] },
      { id: "p2", name: "P2", signingSecrets: [] },
    ]),
    keys: new MemoryKeyStore([
      {
        keyHash: hashApiKey(key),
        partnerId: "p1",
        environment: "sandbox",
        status: "active",
        label: undefined,
      },
      {
        keyHash: hashApiKey(otherKey),
        partnerId: "p2",
        environment: "sandbox",
        status: "active",
        label: undefined,
      },
    ]),
    products: new ChainMetricsProductSource(new MemoryProductSource(records), chains),
    positions: new EvmPositionSource(chains),
    prices: new TablePriceSource(
      new MemoryPriceTable([
        {
          chainId: BASE,
          assetAddress: addr.usdc,
          usdPriceWad: 999_800_000_000_000_000n,
          updatedAtMs: clockMs,
        },
      ]),
      { maxAgeSeconds: 3600, now: () => clockMs },
    ),
    rateLimitOverride: 1_000_000,
  });
});

after(async () => {
  await node?.stop();
  if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
});

describe("positions from chain", () => {
  for (const [slug, wrapper, shareDecimals] of [
    ["usdc-plain", "plain", 6],
    ["usdc-prime", "prime", 18],
  ] as const) {
    test(`${slug}: every wallet's shares and assets are the vault's own balanceOf and convertToAssets`, async () => {
      for (const wallet of wallets) {
        const res = await get(`/api/partner/products/${slug}/position`, `address=${wallet.toLowerCase()}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const shares = await onChain<bigint>(addr[wrapper], "balanceOf", [wallet]);
        const assets = await onChain<bigint>(addr[wrapper], "convertToAssets", [shares]);
        assert.ok(shares > 0n && assets > 0n);
        assert.deepEqual(res.body.data, {
          wallet_address: wallet,
          product_slug: slug,
          shares: formatUnits(shares, shareDecimals),
          assets: formatUnits(assets, 6),
          usd_value: formatUnits((assets * 999_800_000_000_000_000n * 100n) / (USDC * 10n ** 18n), 2),
        });
      }
    });
  }

  test("the yield sent to the vault is in the holders' assets: more than they deposited", async () => {
    const res = await get("/api/partner/products/usdc-plain/position", `address=${wallets[0]}`);
    assert.ok(BigInt(res.body.data.assets.replace(".", "")) > 1000n * USDC);
  });

  test("a wallet that holds nothing gets zeros (CONTRACT §2)", async () => {
    const res = await get("/api/partner/products/usdc-prime/position", `address=${chain.accounts[8]}`);
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.data.shares, res.body.data.assets, res.body.data.usd_value], ["0", "0", "0"]);
  });
});

describe("metrics from chain", () => {
  test("wrapper_total_assets is totalAssets(); underlying_apy is the share-price change over the window", async () => {
    const head = await chain.publicClient.getBlock({ blockTag: "latest" });
    const start = await chain.publicClient.getBlock({ blockNumber: head.number - BigInt(WINDOW) });
    const probe = 10n ** 36n; // one 18-decimal share × 10^18
    const p0 = await onChain<bigint>(addr.underlying, "convertToAssets", [probe], start.number);
    const p1 = await onChain<bigint>(addr.underlying, "convertToAssets", [probe], head.number);
    assert.ok(p1 > p0, "the underlying vault earned yield inside the window");
    // docs/math.md, "Underlying APY from chain", written out again here.
    const apy = ((p1 - p0) * 31_536_000n * 10n ** 18n) / (p0 * (head.timestamp - start.timestamp));
    const res = await get("/api/partner/products/usdc-prime");
    assert.equal(res.status, 200);
    const metrics = res.body.data.latest_metrics;
    assert.equal(
      metrics.wrapper_total_assets,
      formatUnits(await onChain<bigint>(addr.prime, "totalAssets", []), 6),
    );
    assert.equal(metrics.underlying_apy, formatUnits(apy, 18));
    assert.equal(metrics.net_apy_for_user, formatUnits((apy * 9850n) / 10000n, 18));
    assert.equal(metrics.as_of_date, new Date(Number(head.timestamp) * 1000).toISOString().slice(0, 10));
    const quote = await get("/api/partner/products/usdc-prime/yield-calc", "amount=1000");
    assert.equal(quote.status, 200);
    assert.equal(quote.body.data.net_apy_for_user, metrics.net_apy_for_user);
  });

  test("the list carries chain metrics for every product of the partner", async () => {
    const res = await get("/api/partner/products");
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.map((p: { slug: string; latest_metrics: { wrapper_total_assets: string } }) => [
        p.slug,
        p.latest_metrics.wrapper_total_assets !== "0.000001",
      ]),
      [
        ["usdc-plain", true],
        ["usdc-prime", true],
      ],
    );
  });
});

describe("refusals", () => {
  test("a product whose decimals disagree with the chain is refused at the check and never served", async () => {
    const checks = await chains.verifyProducts([product("usdc-wrong-offset", "p2", addr.plain, 12)]);
    assert.equal(checks[0]?.status, "refused");
    assert.match(checks[0]?.reason ?? "", /wrapper decimals\(\) is 6, the product says 18/);
    const position = await get(
      "/api/partner/products/usdc-wrong-offset/position",
      `address=${wallets[0]}`,
      otherKey,
    );
    assert.equal(position.status, 503);
    assert.equal(position.body.code, "service_unavailable");
    assert.equal((await get("/api/partner/products", "", otherKey)).status, 503);
  });

  test("a price older than the configured age is 503, never shown as current", async () => {
    const path = "/api/partner/products/usdc-plain/position";
    const saved = clockMs;
    try {
      clockMs = saved + 3601_000;
      const stale = await get(path, `address=${wallets[1]}`);
      assert.equal(stale.status, 503);
      assert.ok(Number(stale.headers["retry-after"]) > 0);
      clockMs = saved + 3599_000;
      assert.equal((await get(path, `address=${wallets[1]}`)).status, 200);
    } finally {
      clockMs = saved;
    }
  });
});

describe("the node goes away", () => {
  test("killed: 503 with Retry-After; restarted: answers again, from the chain", async () => {
    const path = "/api/partner/products/usdc-prime/position";
    assert.equal((await get(path, `address=${wallets[2]}`)).status, 200);
    const reader = chains.reader(BASE)!;
    await reader.checkNode();
    // A node that answers for another chain is not this chain's node.
    const wrongChain = new ChainReader({ chainId: 1, name: "ethereum", rpcUrl: node.rpcUrl });
    await assert.rejects(wrongChain.checkNode(), /ethereum reports chain id 8453, not 1/);
    await node.stop();
    await assert.rejects(reader.checkNode(), (e: unknown) => e instanceof StoreUnavailableError);
    for (const [p, q] of [
      [path, `address=${wallets[2]}`],
      ["/api/partner/products/usdc-prime", ""],
      ["/api/partner/products", ""],
    ] as const) {
      const down = await get(p, q);
      assert.equal(down.status, 503, `${p} while the node is down`);
      assert.equal(down.body.code, "service_unavailable");
      assert.ok(Number(down.headers["retry-after"]) > 0);
    }
    node = await startAnvil({ chainId: BASE, port: node.port, stateFile: join(stateDir, "state.json") });
    await reader.checkNode();
    chain = await connectTestChain(node.rpcUrl);
    // A deposit after the restart: the answer must show it, not a cached pre-crash value.
    await chain.deposit(addr.prime, addr.usdc, wallets[2]!, 10n * USDC);
    const back = await get(path, `address=${wallets[2]}`);
    assert.equal(back.status, 200);
    const shares = await onChain<bigint>(addr.prime, "balanceOf", [wallets[2]]);
    assert.equal(back.body.data.shares, formatUnits(shares, 18));
    assert.equal(
      back.body.data.assets,
      formatUnits(await onChain<bigint>(addr.prime, "convertToAssets", [shares]), 6),
    );
  });
});
