/** The API suite, rate limits (CONTRACT §7): see index.ts. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateApiKey } from "@partner-yield/core";
import { DEMO, expectProblem, loadSandbox, P, type SuiteContext } from "./target.js";

export function rateLimitSuite(suite: SuiteContext): void {
  const { t } = suite;
  describe("rate limits (CONTRACT §7)", () => {
    test("headers on every authenticated response, remaining decreases, 429 with Retry-After, refused not counted", async () => {
      const r = await suite.start({ rateLimitOverride: undefined, rateLimiter: await suite.newLimiter() });
      try {
        const partner = (await loadSandbox().partners.getPartner(DEMO.otherPartnerId))!;
        assert.equal(partner.rateLimits, undefined); // Contoso uses the sandbox default of 100
        const key = DEMO.otherPartnerSandboxApiKey;
        for (let i = 0; i < 100; i++) {
          const res = await r.get(i % 2 === 0 ? `${P}/products` : `${P}/products/nope`, key);
          assert.equal(res.headers["ratelimit-policy"], '"sandbox";q=100;w=60');
          const m = /^"sandbox";r=(\d+);t=(\d+)$/.exec(res.headers["ratelimit"] ?? "");
          assert.ok(m, res.headers["ratelimit"]);
          assert.equal(Number(m[1]), 99 - i);
          assert.ok(Number(m[2]) >= 1 && Number(m[2]) <= 60);
        }
        for (let i = 0; i < 3; i++) {
          const res = await r.get(`${P}/products`, key);
          expectProblem(res, 429, "rate_limited");
          const retry = Number(res.headers["retry-after"]);
          const t429 = Number(/;t=(\d+)$/.exec(res.headers["ratelimit"] ?? "")?.[1]);
          assert.ok(retry >= 1 && retry <= 60);
          assert.ok(retry >= t429);
          assert.match(res.headers["ratelimit"] ?? "", /;r=0;/);
        }
        // Another partner is unaffected.
        assert.equal((await r.get(`${P}/products`)).status, 200);
      } finally {
        await r.close();
      }
    });
    test("unauthenticated responses carry no RateLimit headers", async () => {
      const res = await t.get(`${P}/products`, null);
      assert.equal(res.headers["ratelimit"], undefined);
    });
    test("the failed-authentication limit per client address answers 429 after 30 failures", async () => {
      const r = await suite.start();
      try {
        for (let i = 0; i < 30; i++)
          expectProblem(await r.get(`${P}/products`, generateApiKey("sandbox")), 401, "invalid_api_key");
        const over = await r.get(`${P}/products`, generateApiKey("sandbox"));
        const blocked = expectProblem(over, 429, "rate_limited");
        assert.match(String(blocked["detail"]), /failed authentication/);
        assert.ok(Number(over.headers["retry-after"]) >= 1);
        // A valid key from that address is still served (CONTRACT §4): one guesser or one stale
        // client behind a shared address does not take the others offline.
        const res = await r.get(`${P}/products`);
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers["ratelimit"] ?? "", /;r=\d+;/);
      } finally {
        await r.close();
      }
    });
  });

  describe("rate limits: gaps found by mutation testing", () => {
    test("wrong-environment keys count as failed authentications; a missing key does not", async () => {
      const r = await suite.start();
      try {
        for (let i = 0; i < 40; i++)
          expectProblem(await r.get(`${P}/products`, null), 401, "missing_api_key");
        for (let i = 0; i < 30; i++)
          expectProblem(await r.get(`${P}/products`, DEMO.productionApiKey), 401, "wrong_environment");
        expectProblem(await r.get(`${P}/products`, DEMO.productionApiKey), 429, "rate_limited");
      } finally {
        await r.close();
      }
    });
    test("concurrent guesses that all pass the pre-check: only 30 are answered 401", async () => {
      const r = await suite.start();
      try {
        const results = await Promise.all(
          Array.from({ length: 40 }, () => r.get(`${P}/products`, "not-a-key")),
        );
        const statuses = results.map((x) => x.status);
        assert.equal(statuses.filter((s) => s === 401).length, 30, statuses.join(","));
        assert.equal(statuses.filter((s) => s === 429).length, 10, statuses.join(","));
      } finally {
        await r.close();
      }
    });
    test("the quota is per partner AND environment, even with a shared limiter", async () => {
      const shared = await suite.newLimiter();
      const sandbox = await suite.start({ rateLimiter: shared, rateLimitOverride: 2 });
      const production = await suite.start({
        environment: "production",
        rateLimiter: shared,
        rateLimitOverride: 2,
      });
      try {
        for (let i = 0; i < 2; i++) assert.equal((await sandbox.get(`${P}/products`)).status, 200);
        expectProblem(await sandbox.get(`${P}/products`), 429, "rate_limited");
        const prod = await production.get(`${P}/products`, DEMO.productionApiKey);
        assert.equal(prod.status, 200, prod.text);
        assert.equal(
          prod.headers["ratelimit"]?.startsWith('"production";r=1;'),
          true,
          prod.headers["ratelimit"],
        );
      } finally {
        await sandbox.close();
        await production.close();
      }
    });
  });
}
