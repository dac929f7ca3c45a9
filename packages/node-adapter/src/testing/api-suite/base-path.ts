/**
 * The API suite, the base path (`basePath`): the whole API can live under another prefix, and its
 * OpenAPI document says so. See index.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createPartnerApi, ProductListResponse } from "@partner-yield/core";
import { expectProblem, json, loadSandbox, P, type SuiteContext } from "./target.js";

export function basePathSuite(suite: SuiteContext): void {
  describe("base path (createPartnerApi basePath)", () => {
    for (const base of ["/partner-api", "/v1/partner", ""]) {
      test(`every route lives under ${JSON.stringify(base)}; the default prefix is then unknown`, async () => {
        const r = await suite.start({ basePath: base });
        try {
          const list = await r.get(`${base}/products`);
          assert.equal(list.status, 200, list.text);
          ProductListResponse.parse(json(list));
          const quote = await r.get(`${base}/products/usdc-base-prime/yield-calc?amount=1000`);
          assert.equal(quote.status, 200, quote.text);
          const event = await r.postEvent(
            JSON.stringify({
              event_type: "partner.user.created",
              occurred_at: "2026-11-20T10:15:00Z",
              data: {},
            }),
            {},
            `${base}/webhooks/inbound`,
          );
          assert.equal(event.status, 200, event.text);
          expectProblem(await r.get(`${P}/products`), 404, "not_found");
          expectProblem(
            await r.send({ method: "DELETE", path: `${base}/products` }),
            405,
            "method_not_allowed",
          );
          const doc = json(await r.get(`${base}/openapi.json`, null)) as { paths: Record<string, unknown> };
          assert.deepEqual(Object.keys(doc.paths), [
            `${base}/products`,
            `${base}/products/{slug}`,
            `${base}/products/{slug}/position`,
            `${base}/products/{slug}/yield-calc`,
            `${base}/webhooks/inbound`,
            `${base}/openapi.json`,
          ]);
        } finally {
          await r.close();
        }
      });
    }

    test("a base path with a trailing slash, no leading slash or an empty segment is refused at creation", () => {
      for (const basePath of ["/", "/partner/", "partner", "/a//b", "/a b"]) {
        assert.throws(
          () => createPartnerApi({ environment: "sandbox", ...loadSandbox(), basePath }),
          RangeError,
          basePath,
        );
      }
    });
  });
}
