/**
 * The limiter keys and the policy header are reused from one request to the next when they are
 * the same (rate-limit.ts, authenticate.ts); requests that alternate between partners, client
 * addresses or quotas must each still be counted and described as their own.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  createPartnerApi,
  generateApiKey,
  hashApiKey,
  MemoryRateLimiter,
  type RateLimiter,
} from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const PRODUCTS = "/api/partner/products";

/** A memory limiter that records each decision's key. */
function recordingLimiter(calls: string[]): RateLimiter {
  const inner = new MemoryRateLimiter();
  return {
    hit: (key, limit, windowMs) => {
      calls.push(`hit ${key}`);
      return inner.hit(key, limit, windowMs);
    },
    peek: (key, limit, windowMs) => {
      calls.push(`peek ${key}`);
      return inner.peek(key, limit, windowMs);
    },
    close: () => inner.close(),
  };
}

test("alternating partners and client addresses are each counted under their own key", async () => {
  const data = loadSandbox();
  const contosoKey = generateApiKey("sandbox");
  data.keys.put({
    keyHash: hashApiKey(contosoKey),
    partnerId: "contoso",
    environment: "sandbox",
    status: "active",
  });
  const calls: string[] = [];
  const api = createPartnerApi({ environment: "sandbox", ...data, rateLimiter: recordingLimiter(calls) });
  const get = (key: string, clientAddress: string) =>
    api.handle({ method: "GET", path: PRODUCTS, headers: { "x-api-key": key }, clientAddress });

  const answers = [
    await get(DEMO.sandboxApiKey, "192.0.2.1"),
    await get(contosoKey, "192.0.2.2"),
    await get(DEMO.sandboxApiKey, "192.0.2.1"),
  ];
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200],
  );
  // A usable key meets no failed-authentication count (CONTRACT §4): only the partner's is hit.
  assert.deepEqual(calls, [
    "hit rate:northwind:sandbox",
    "hit rate:contoso:sandbox",
    "hit rate:northwind:sandbox",
  ]);
  // Each partner's own count: northwind has used 2 of 100, contoso 1.
  assert.deepEqual(
    answers.map((a) => a.headers["ratelimit"]),
    ['"sandbox";r=99;t=60', '"sandbox";r=99;t=60', '"sandbox";r=98;t=60'],
  );
});

test("instances with other quotas, asked in turn, each state their own policy", async () => {
  const five = createPartnerApi({ environment: "sandbox", ...loadSandbox(), rateLimitOverride: 5 });
  const seven = createPartnerApi({ environment: "sandbox", ...loadSandbox(), rateLimitOverride: 7 });
  const policies: (string | undefined)[] = [];
  for (const api of [five, seven, five]) {
    const answer = await api.handle({
      method: "GET",
      path: PRODUCTS,
      headers: { "x-api-key": DEMO.sandboxApiKey },
    });
    policies.push(answer.headers["ratelimit-policy"]);
  }
  assert.deepEqual(policies, ['"sandbox";q=5;w=60', '"sandbox";q=7;w=60', '"sandbox";q=5;w=60']);
});
