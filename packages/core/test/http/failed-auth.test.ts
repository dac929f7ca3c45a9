/**
 * The failed-authentication limit (CONTRACT §4, docs/contract.md "Authentication"): failures are
 * counted per client address and per presented key; a failure past either limit is 429; a usable
 * key is served whatever its address or another key has failed, so thirty bad keys from one
 * address (a stale deploy, every tenant behind one NAT) take no partner offline.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createPartnerApi, generateApiKey, MemoryRateLimiter, type PlainRequest } from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const LIMIT = 5;

function setup() {
  return createPartnerApi({
    environment: "sandbox",
    ...loadSandbox(),
    failedAuthPerMinute: LIMIT,
    rateLimiter: new MemoryRateLimiter(),
  });
}

function get(key: string, clientAddress: string): PlainRequest {
  return { method: "GET", path: "/api/partner/products", headers: { "x-api-key": key }, clientAddress };
}

async function codeOf(api: ReturnType<typeof setup>, request: PlainRequest): Promise<[number, string]> {
  const res = await api.handle(request);
  return [res.status, res.status === 200 ? "ok" : (JSON.parse(res.body!) as { code: string }).code];
}

describe("failed authentication: per address and per key, never against a usable key", () => {
  test("a revoked key retried from one address: 401 then 429; the partner's and another partner's keys still served there", async () => {
    const api = setup();
    const address = "198.51.100.7";
    const answers: number[] = [];
    for (let i = 0; i < LIMIT + 3; i++)
      answers.push((await codeOf(api, get(DEMO.revokedSandboxApiKey, address)))[0]);
    assert.deepEqual(answers, [...Array(LIMIT).fill(401), 429, 429, 429]);
    assert.deepEqual(await codeOf(api, get(DEMO.sandboxApiKey, address)), [200, "ok"]);
    assert.deepEqual(await codeOf(api, get(DEMO.otherPartnerSandboxApiKey, address)), [200, "ok"]);
    // Another guess from that address is still limited: the address's count is full.
    assert.deepEqual(await codeOf(api, get(generateApiKey("sandbox"), address)), [429, "rate_limited"]);
  });

  test("one key's failures are counted wherever they come from; unknown and revoked keys alike", async () => {
    for (const key of [DEMO.revokedSandboxApiKey, generateApiKey("sandbox")]) {
      const api = setup();
      const answers: number[] = [];
      for (let i = 0; i < LIMIT + 1; i++) answers.push((await codeOf(api, get(key, `203.0.113.${i}`)))[0]);
      assert.deepEqual(answers, [...Array(LIMIT).fill(401), 429], key.slice(0, 9));
      // A fresh address with a different bad key is not limited by that key's count.
      assert.deepEqual(await codeOf(api, get(generateApiKey("sandbox"), "203.0.113.200")), [
        401,
        "invalid_api_key",
      ]);
    }
  });

  test("an enumeration from one address is still stopped: every miss past the limit is 429", async () => {
    const api = setup();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT * 3; i++)
      statuses.push((await codeOf(api, get(generateApiKey("sandbox"), "192.0.2.99")))[0]);
    assert.deepEqual(statuses, [...Array(LIMIT).fill(401), ...Array(LIMIT * 2).fill(429)]);
    // Malformed keys and keys of the other environment count against the address too.
    assert.deepEqual(await codeOf(api, get("ypk_test_nope", "192.0.2.99")), [429, "rate_limited"]);
    assert.deepEqual(await codeOf(api, get(DEMO.productionApiKey, "192.0.2.99")), [429, "rate_limited"]);
  });
});

describe("failed authentication: an IPv6 client counts by its /64 (or the prefix configured)", () => {
  test("guesses from addresses of one /64 share one count; another /64 has its own", async () => {
    const api = setup();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++)
      statuses.push(
        (await codeOf(api, get(generateApiKey("sandbox"), `2001:db8:1:2::${(i + 1).toString(16)}`)))[0],
      );
    assert.deepEqual(statuses, [...Array(LIMIT).fill(401), 429]);
    assert.deepEqual(await codeOf(api, get(generateApiKey("sandbox"), "2001:db8:1:3::1")), [
      401,
      "invalid_api_key",
    ]);
  });

  test("with ipv6PrefixLength 128 each address counts on its own; a bad length is refused", async () => {
    const api = createPartnerApi({
      environment: "sandbox",
      ...loadSandbox(),
      failedAuthPerMinute: LIMIT,
      ipv6PrefixLength: 128,
      rateLimiter: new MemoryRateLimiter(),
    });
    for (let i = 0; i < LIMIT + 1; i++)
      assert.equal((await codeOf(api, get(generateApiKey("sandbox"), `2001:db8::${i + 1}`)))[0], 401);
    assert.throws(
      () => createPartnerApi({ environment: "sandbox", ...loadSandbox(), ipv6PrefixLength: 0 }),
      RangeError,
    );
  });
});
