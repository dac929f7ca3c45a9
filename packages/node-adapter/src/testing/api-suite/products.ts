/** The API suite, products (CONTRACT §8): see index.ts. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Product, ProductListResponse } from "@partner-yield/core";
import { formatUnits, netApy } from "@partner-yield/core/math";
import { DEMO, expectProblem, json, loadSandbox, P, type SuiteContext, WALLET } from "./target.js";

export function productsSuite(suite: SuiteContext): void {
  const { t } = suite;
  describe("products (CONTRACT §8)", () => {
    test("the list holds every product of the caller, every status, ordered by slug, each valid", async () => {
      const res = await t.get(`${P}/products`);
      assert.equal(res.status, 200);
      assert.match(res.headers["content-type"] ?? "", /^application\/json; charset=utf-8$/);
      const body = ProductListResponse.parse(json(res));
      const slugs = body.data.map((p) => p.slug);
      assert.deepEqual(slugs, [...slugs].sort());
      assert.equal(slugs.length, 6);
      assert.deepEqual(new Set(body.data.map((p) => p.status)), new Set(["active", "paused", "deprecated"]));
      assert.ok(body.data.every((p) => p.partner === "Northwind Wallet"));
      assert.ok(body.data.some((p) => p.latest_metrics === null));
    });
    test("get agrees with the list, field for field", async () => {
      const list = ProductListResponse.parse(json(await t.get(`${P}/products`))).data;
      for (const item of list) {
        const res = await t.get(`${P}/products/${item.slug}`);
        assert.equal(res.status, 200);
        const body = json(res) as { success: boolean; data: unknown };
        assert.equal(body.success, true);
        assert.deepEqual(Product.parse(body.data), item);
      }
    });
    test("net_apy_for_user follows the fee formula of CONTRACT §2", async () => {
      const list = ProductListResponse.parse(json(await t.get(`${P}/products`))).data;
      for (const p of list) {
        if (p.latest_metrics === null) continue;
        const a = BigInt(p.latest_metrics.underlying_apy.replace(".", "").replace(/^(-?)0+(?=\d)/, "$1"));
        const scale = 10n ** BigInt(18 - (p.latest_metrics.underlying_apy.split(".")[1]?.length ?? 0));
        const expected = formatUnits(netApy(a * scale, p.service_fee_bps, p.partner_fee_bps), 18);
        assert.equal(p.latest_metrics.net_apy_for_user, expected, p.slug);
      }
      const loss = list.find((p) => p.slug === "eurc-base-drawdown")!;
      assert.equal(loss.latest_metrics!.net_apy_for_user, loss.latest_metrics!.underlying_apy);
    });
    test("unknown slug, malformed slug and another partner's slug are all 404 product_not_found", async () => {
      expectProblem(await t.get(`${P}/products/no-such-product`), 404, "product_not_found");
      expectProblem(await t.get(`${P}/products/USDC-BASE-PRIME`), 404, "product_not_found");
      expectProblem(await t.get(`${P}/products/%2e%2e`), 404, "product_not_found");
      expectProblem(await t.get(`${P}/products/usdc-ethereum-contoso`), 404, "product_not_found");
      expectProblem(
        await t.get(`${P}/products/usdc-ethereum-contoso/position?address=${WALLET}`),
        404,
        "product_not_found",
      );
      expectProblem(
        await t.get(`${P}/products/usdc-ethereum-contoso/yield-calc?amount=1`),
        404,
        "product_not_found",
      );
    });
    test("a slug outside the pattern never reaches the product source", async () => {
      const data = loadSandbox();
      const asked: string[] = [];
      // A store with a case-insensitive collation would match "USDC-BASE-PRIME" if it were asked.
      const r = await suite.start({
        products: {
          listProducts: data.products.listProducts.bind(data.products),
          getProduct: (partnerId: string, slug: string) => {
            asked.push(slug);
            return data.products.getProduct(partnerId, slug.toLowerCase());
          },
        },
      });
      try {
        for (const slug of ["USDC-BASE-PRIME", "-usdc-base-prime", `a${"b".repeat(64)}`])
          expectProblem(await r.get(`${P}/products/${slug}`), 404, "product_not_found");
        assert.deepEqual(asked, []);
        assert.equal((await r.get(`${P}/products/usdc-base-prime`)).status, 200);
      } finally {
        await r.close();
      }
    });
    test("partners are isolated: the second partner sees only its own products", async () => {
      const res = await t.get(`${P}/products`, DEMO.otherPartnerSandboxApiKey);
      const body = ProductListResponse.parse(json(res));
      assert.deepEqual(
        body.data.map((p) => p.slug),
        ["usdc-ethereum-contoso", "wbtc-avalanche-contoso"],
      );
      expectProblem(
        await t.get(`${P}/products/usdc-base-prime`, DEMO.otherPartnerSandboxApiKey),
        404,
        "product_not_found",
      );
    });
  });
}
