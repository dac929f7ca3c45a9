/** The API suite, yield-calc (CONTRACT §2, §3): see index.ts. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { quoteYield } from "@partner-yield/core/math";
import { YIELD_VECTORS } from "@partner-yield/core/testing";
import { expectProblem, json, P, type SuiteContext } from "./target.js";

export function yieldCalcSuite(suite: SuiteContext): void {
  const { t } = suite;
  describe("yield-calc (CONTRACT §2, §3)", () => {
    test("the quote is the reference math, digit for digit", async () => {
      const res = await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=123456.789`);
      assert.equal(res.status, 200, res.text);
      const expected = quoteYield({
        amountUnits: 123456789000n,
        assetDecimals: 6,
        underlyingApyWad: 52300000000000000n,
        serviceFeeBps: 50,
        partnerFeeBps: 100,
      });
      // The published vector (YIELD_VECTORS): 123456.789 USDC at 5.23 %, fees 50 + 100 bps.
      const vector = YIELD_VECTORS.yield_calc.find(
        (v) =>
          v.amount === "123456.789" &&
          v.asset_decimals === 6 &&
          v.underlying_apy === "0.0523" &&
          v.service_fee_bps === 50 &&
          v.partner_fee_bps === 100,
      );
      assert.ok(vector !== undefined, "the vector is published");
      assert.deepEqual((json(res) as { data: unknown }).data, {
        principal: vector.principal,
        annual_yield: vector.annual_yield,
        monthly_yield: vector.monthly_yield,
        net_apy_for_user: vector.net_apy_for_user,
      });
      assert.deepEqual((json(res) as { data: unknown }).data, expected);
    });
    test("results do not depend on how the amount was written", async () => {
      const a = await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=1.50`);
      const b = await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=1.5`);
      assert.equal(a.status, 200);
      assert.deepEqual((json(a) as { data: unknown }).data, (json(b) as { data: unknown }).data);
      assert.equal((json(a) as { data: { principal: string } }).data.principal, "1.5");
    });
    test("a loss-making product quotes a negative yield without fees", async () => {
      const res = await t.get(`${P}/products/eurc-base-drawdown/yield-calc?amount=1000`);
      assert.equal(res.status, 200);
      const data = (json(res) as { data: { annual_yield: string; net_apy_for_user: string } }).data;
      assert.equal(data.net_apy_for_user, "-0.0125");
      assert.equal(data.annual_yield, "-12.5");
    });
    test("malformed amounts → 400 invalid_amount saying which rule failed", async () => {
      const bad = [
        "1e3",
        "%2B1",
        "-1",
        "0",
        ".5",
        "5.",
        "%205",
        "0x10",
        "1,000",
        "NaN",
        "01",
        "%EF%BC%91",
        "",
        "1.1234567",
        "0.0000000",
      ];
      for (const amount of bad) {
        const body = expectProblem(
          await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=${amount}`),
          400,
          "invalid_amount",
        );
        assert.equal((body["errors"] as { pointer: string }[])[0]?.pointer, "/query/amount", amount);
      }
      const tooPrecise = expectProblem(
        await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=1.1234567`),
        400,
        "invalid_amount",
      );
      assert.match(String(tooPrecise["detail"]), /7 fractional digits.*6/);
      const huge = (2n ** 256n).toString();
      expectProblem(
        await t.get(`${P}/products/weth-ethereum-staked/yield-calc?amount=${huge}`),
        400,
        "invalid_amount",
      );
      expectProblem(await t.get(`${P}/products/usdc-base-prime/yield-calc`), 400, "invalid_amount");
      expectProblem(
        await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=1&amount=2`),
        400,
        "invalid_parameter",
      );
    });
    test("unknown query parameters are ignored, even malformed ones", async () => {
      const res = await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=10&foo=bar&foo=baz`);
      assert.equal(res.status, 200, res.text);
      assert.equal(
        (await t.get(`${P}/products/usdc-base-prime/yield-calc?foo=%zz&%zz=1&amount=1`)).status,
        200,
      );
      const bad = expectProblem(
        await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=%zz`),
        400,
        "invalid_parameter",
      );
      assert.equal((bad["errors"] as { pointer: string }[])[0]?.pointer, "/query/amount");
    });
    test("paused and deprecated products → 409 product_not_active; no metrics → 409 metrics_unavailable", async () => {
      expectProblem(
        await t.get(`${P}/products/weth-ethereum-staked/yield-calc?amount=1`),
        409,
        "product_not_active",
      );
      expectProblem(
        await t.get(`${P}/products/dai-optimism-legacy/yield-calc?amount=1`),
        409,
        "product_not_active",
      );
      expectProblem(
        await t.get(`${P}/products/usdt-polygon-launch/yield-calc?amount=1`),
        409,
        "metrics_unavailable",
      );
    });
    test("the amount is checked against the product's decimals", async () => {
      assert.equal(
        (await t.get(`${P}/products/weth-ethereum-staked/yield-calc?amount=0.000000000000000001`)).status,
        409,
      );
      expectProblem(
        await t.get(`${P}/products/wbtc-arbitrum-core/yield-calc?amount=0.000000001`),
        400,
        "invalid_amount",
      );
      assert.equal(
        (await t.get(`${P}/products/wbtc-arbitrum-core/yield-calc?amount=0.00000001`)).status,
        200,
      );
    });
  });
}
