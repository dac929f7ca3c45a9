/** The API suite, authentication (CONTRACT §4): see index.ts. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateApiKey } from "@partner-yield/core";
import { DEMO, expectProblem, KEY, P, type SuiteContext } from "./target.js";

export function authenticationSuite(suite: SuiteContext): void {
  const { t } = suite;
  describe("authentication (CONTRACT §4)", () => {
    test("missing key → 401 missing_api_key", async () => {
      expectProblem(await t.get(`${P}/products`, null), 401, "missing_api_key");
      expectProblem(await t.get(`${P}/products`, ""), 401, "missing_api_key");
    });
    test("malformed, unknown or revoked key → 401 invalid_api_key", async () => {
      expectProblem(await t.get(`${P}/products`, "not-a-key"), 401, "invalid_api_key");
      const typo = KEY.slice(0, -8) + (KEY.at(-8) === "a" ? "b" : "a") + KEY.slice(-7);
      expectProblem(await t.get(`${P}/products`, typo), 401, "invalid_api_key");
      expectProblem(await t.get(`${P}/products`, generateApiKey("sandbox")), 401, "invalid_api_key");
      expectProblem(await t.get(`${P}/products`, DEMO.revokedSandboxApiKey), 401, "invalid_api_key");
    });
    test("a production key on the sandbox → 401 wrong_environment naming the key's environment", async () => {
      const body = expectProblem(
        await t.get(`${P}/products`, DEMO.productionApiKey),
        401,
        "wrong_environment",
      );
      assert.match(String(body["detail"]), /production/);
    });
    test("a bad key wins over bad parameters and unknown products", async () => {
      expectProblem(
        await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=-1`, "nope"),
        401,
        "invalid_api_key",
      );
      expectProblem(await t.get(`${P}/products/no-such-product`, null), 401, "missing_api_key");
    });
    test("errors never echo the key", async () => {
      const bogus = generateApiKey("sandbox");
      const res = await t.get(`${P}/products`, bogus);
      assert.ok(!res.text.includes(bogus));
      assert.ok(!res.text.includes(KEY));
    });
  });
}
