/** The API suite, position (CONTRACT §2, §3): see index.ts. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MemoryPositionSource, Position, toChecksumAddress } from "@partner-yield/core";
import { convertToAssets, formatUnits, usdValueCents } from "@partner-yield/core/math";
import {
  DEMO,
  EMPTY_WALLET,
  expectProblem,
  json,
  loadSandbox,
  P,
  type SuiteContext,
  WALLET,
} from "./target.js";

export function positionSuite(suite: SuiteContext): void {
  const { t } = suite;
  describe("position (CONTRACT §2, §3)", () => {
    test("a wallet with shares: convertToAssets with virtual shares, USD in cents", async () => {
      const data = loadSandbox();
      const product = (await data.products.getProduct(DEMO.partnerId, "usdc-base-prime"))!;
      const res = await t.get(`${P}/products/usdc-base-prime/position?address=${WALLET}`);
      assert.equal(res.status, 200);
      const pos = Position.parse((json(res) as { data: unknown }).data);
      const shares = 1500250000000000000000n;
      const assets = convertToAssets(
        shares,
        12345678901234n,
        11900000000000000000000000n,
        product.decimalsOffset,
      );
      assert.deepEqual(pos, {
        wallet_address: WALLET,
        product_slug: "usdc-base-prime",
        shares: formatUnits(shares, 18),
        assets: formatUnits(assets, 6),
        usd_value: formatUnits(usdValueCents(assets, 6, 999800000000000000n), 2),
        vault: {
          decimals_offset: 12,
          total_assets: "12345678901234",
          total_supply: "11900000000000000000000000",
          usd_price: "0.9998",
        },
      });
      assert.equal(pos.shares, "1500.25");
    });
    test("the audit view recomputes the answer; virtual shares change it on a small vault after a donation", async () => {
      const res = await t.get(`${P}/products/usdt-polygon-launch/position?address=${WALLET}`);
      assert.equal(res.status, 200, res.text);
      const pos = Position.parse((json(res) as { data: unknown }).data);
      assert.deepEqual(pos.vault, {
        decimals_offset: 6,
        total_assets: "250000000",
        total_supply: "1000000000000",
        usd_price: "1",
      });
      // floor(600000000000 × (250000000 + 1) / (1000000000000 + 10^6)): 149.99985 USDT, not 150.
      assert.equal(pos.shares, "0.6");
      assert.equal(pos.assets, "149.99985");
      assert.equal(pos.usd_value, "149.99");
    });
    test("a wrapper with no vault entry answers zeros and no audit view", async () => {
      const r = await suite.start({ positions: new MemoryPositionSource([]) });
      try {
        const res = await r.get(`${P}/products/usdc-base-prime/position?address=${WALLET}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual((json(res) as { data: unknown }).data, {
          wallet_address: WALLET,
          product_slug: "usdc-base-prime",
          shares: "0",
          assets: "0",
          usd_value: "0",
        });
      } finally {
        await r.close();
      }
    });
    test("a wallet with shares but no known USD price → 503 service_unavailable, Retry-After: 60", async () => {
      const r = await suite.start({ prices: { getUsdPriceWad: () => Promise.resolve(undefined) } });
      try {
        const res = await r.get(`${P}/products/usdc-base-prime/position?address=${WALLET}`);
        expectProblem(res, 503, "service_unavailable");
        assert.equal(res.headers["retry-after"], "60");
        // No shares, no price needed.
        const empty = await r.get(`${P}/products/usdc-base-prime/position?address=${EMPTY_WALLET}`);
        assert.equal(empty.status, 200, empty.text);
      } finally {
        await r.close();
      }
    });
    test("a wallet that holds nothing gets 200 with zeros", async () => {
      const res = await t.get(`${P}/products/usdc-base-prime/position?address=${EMPTY_WALLET}`);
      assert.equal(res.status, 200);
      assert.deepEqual((json(res) as { data: unknown }).data, {
        wallet_address: EMPTY_WALLET,
        product_slug: "usdc-base-prime",
        shares: "0",
        assets: "0",
        usd_value: "0",
        vault: {
          decimals_offset: 12,
          total_assets: "12345678901234",
          total_supply: "11900000000000000000000000",
        },
      });
    });
    test("all-lowercase and all-uppercase addresses are accepted and echoed in EIP-55 form", async () => {
      for (const form of [WALLET.toLowerCase(), `0x${WALLET.slice(2).toUpperCase()}`]) {
        const res = await t.get(`${P}/products/usdc-base-prime/position?address=${form}`);
        assert.equal(res.status, 200, res.text);
        assert.equal(
          (json(res) as { data: { wallet_address: string } }).data.wallet_address,
          toChecksumAddress(WALLET),
        );
      }
    });
    test("a mixed-case address with a bad checksum → 400 invalid_address", async () => {
      const flipped = WALLET.slice(0, 3) + (WALLET[3] === "a" ? "A" : "a") + WALLET.slice(4);
      const body = expectProblem(
        await t.get(`${P}/products/usdc-base-prime/position?address=${flipped}`),
        400,
        "invalid_address",
      );
      assert.deepEqual((body["errors"] as { pointer: string }[])[0]?.pointer, "/query/address");
    });
    test("malformed or missing addresses → 400 invalid_address; repeated → 400 invalid_parameter", async () => {
      for (const bad of [
        "0x123",
        "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        `0X${"a".repeat(40)}`,
        `0x${"g".repeat(40)}`,
        `0x${"a".repeat(41)}`,
        "",
        "%20",
      ]) {
        expectProblem(
          await t.get(`${P}/products/usdc-base-prime/position?address=${bad}`),
          400,
          "invalid_address",
        );
      }
      expectProblem(await t.get(`${P}/products/usdc-base-prime/position`), 400, "invalid_address");
      expectProblem(
        await t.get(`${P}/products/usdc-base-prime/position?address=${WALLET}&address=${WALLET}`),
        400,
        "invalid_parameter",
      );
      expectProblem(
        await t.get(`${P}/products/usdc-base-prime/position?address=%zz`),
        400,
        "invalid_parameter",
      );
    });
    test("the product is resolved before the address is validated", async () => {
      expectProblem(
        await t.get(`${P}/products/no-such-product/position?address=nope`),
        404,
        "product_not_found",
      );
    });
    test("position works for every status", async () => {
      for (const slug of ["weth-ethereum-staked", "dai-optimism-legacy", "usdt-polygon-launch"]) {
        const res = await t.get(`${P}/products/${slug}/position?address=${WALLET}`);
        assert.equal(res.status, 200, `${slug}: ${res.text}`);
      }
    });
  });
}
