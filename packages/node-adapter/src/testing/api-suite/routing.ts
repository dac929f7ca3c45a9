/** The API suite, routing (CONTRACT §9: before authentication): see index.ts. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { expectProblem, json, KEY, P, type SuiteContext } from "./target.js";

export function routingSuite(suite: SuiteContext): void {
  const { t } = suite;
  describe("routing (CONTRACT §9: before authentication)", () => {
    test("unknown path is 404 not_found, even without a key", async () => {
      expectProblem(await t.get(`${P}/nope`, null), 404, "not_found");
      expectProblem(await t.get("/", null), 404, "not_found");
      expectProblem(await t.get(`${P}/products/`, null), 404, "not_found");
      expectProblem(await t.get(`${P}/products/usdc-base-prime/position/x`, null), 404, "not_found");
    });
    test("known path with another method is 405 with Allow", async () => {
      const res = await t.send({ method: "POST", path: `${P}/products`, headers: {} });
      expectProblem(res, 405, "method_not_allowed");
      assert.equal(res.headers["allow"], "GET, HEAD");
      const res2 = await t.send({
        method: "GET",
        path: `${P}/webhooks/inbound`,
        headers: { "x-api-key": KEY },
      });
      expectProblem(res2, 405, "method_not_allowed");
      assert.equal(res2.headers["allow"], "POST");
      const res3 = await t.send({ method: "DELETE", path: `${P}/products/usdc-base-prime`, headers: {} });
      expectProblem(res3, 405, "method_not_allowed");
    });
    test("HEAD is answered as GET without a body", async () => {
      const res = await t.send({ method: "HEAD", path: `${P}/products`, headers: { "x-api-key": KEY } });
      assert.equal(res.status, 200);
      assert.equal(res.text, "");
      assert.match(res.headers["content-type"] ?? "", /^application\/json/);
      assert.ok(res.headers["ratelimit"]);
      const get = await t.get(`${P}/products`);
      assert.equal(res.headers["content-length"], String(new TextEncoder().encode(get.text).byteLength));
    });
    test("HEAD's Content-Length is GET's body length in bytes, not characters", async () => {
      const path = `${P}/openapi.json`;
      const get = await t.get(path, null);
      assert.notEqual(get.text.length, new TextEncoder().encode(get.text).byteLength); // non-ASCII
      const head = await t.send({ method: "HEAD", path, headers: {} });
      assert.equal(head.text, "");
      assert.equal(head.headers["content-length"], String(new TextEncoder().encode(get.text).byteLength));
    });
    test("every response carries the common headers (CONTRACT §9)", async () => {
      for (const res of [await t.get(`${P}/products`), await t.get(`${P}/nope`, null)]) {
        assert.match(res.headers["x-request-id"] ?? "", /^req_/);
        assert.equal(res.headers["cache-control"], "no-store");
        assert.equal(res.headers["x-content-type-options"], "nosniff");
        assert.equal(res.headers["access-control-allow-origin"], undefined);
      }
    });
    test("the OpenAPI document is served without a key", async () => {
      const res = await t.get(`${P}/openapi.json`, null);
      assert.equal(res.status, 200);
      assert.equal(json(res)["openapi"], "3.1.0");
    });
  });
}
