/**
 * The in-memory limiter's failed-authentication table is bounded (issue 10): one million source
 * addresses must not cost one million entries. Past the cap, new addresses share one overflow
 * bucket with the same limit, so the limit still applies; partner quotas are not affected.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createPartnerApi, MemoryRateLimiter } from "../../src/index.js";
import {
  DEFAULT_MAX_FAILED_AUTH_ADDRESSES,
  FAILED_AUTH_OVERFLOW_KEY,
} from "../../src/stores/rate-limiter.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const WINDOW = 60_000;

function clock(start = 1_000_000) {
  const c = { now: start };
  return c;
}

test("the default cap is 50,000 addresses and the table never grows past it", async () => {
  assert.equal(DEFAULT_MAX_FAILED_AUTH_ADDRESSES, 50_000);
  const c = clock();
  const limiter = new MemoryRateLimiter({ now: () => c.now });
  for (let i = 0; i < 60_000; i++)
    await limiter.hit(`auth:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, 30, WINDOW);
  // 50,000 addresses and the overflow bucket.
  assert.equal(limiter.size, 50_001);
});

test("past the cap, new addresses share one bucket with the same limit; known addresses keep theirs", async () => {
  const c = clock();
  const limiter = new MemoryRateLimiter({ now: () => c.now, maxFailedAuthAddresses: 3 });
  for (const a of ["a", "b", "c"]) assert.equal((await limiter.hit(`auth:${a}`, 2, WINDOW)).allowed, true);
  // d, e, f are new: one bucket of 2 between them.
  assert.equal((await limiter.hit("auth:d", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:e", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:f", 2, WINDOW)).allowed, false);
  assert.equal(
    (await limiter.peek("auth:g", 2, WINDOW)).allowed,
    false,
    "a peek of a new address sees the bucket",
  );
  assert.equal((await limiter.peek(FAILED_AUTH_OVERFLOW_KEY, 2, WINDOW)).remaining, 0);
  // A known address still has its own count.
  assert.equal((await limiter.hit("auth:a", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:a", 2, WINDOW)).allowed, false);
  // Partner quotas are not failed-auth keys: never capped, never pooled.
  for (let p = 0; p < 10; p++)
    assert.equal((await limiter.hit(`rate:p${p}:sandbox`, 1, WINDOW)).allowed, true);
  assert.equal(limiter.size, 3 + 1 + 10);
  // Once the window has passed, the expired addresses make room again.
  c.now += WINDOW + 1000;
  assert.equal((await limiter.hit("auth:h", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:h", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:h", 2, WINDOW)).allowed, false, "h has a bucket of its own");
  assert.equal((await limiter.hit("auth:i", 2, WINDOW)).allowed, true, "and i is not blocked by h");
});

test("through the API: guesses from more addresses than the cap are still limited", async () => {
  const limiter = new MemoryRateLimiter({ maxFailedAuthAddresses: 10 });
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadSandbox(),
    rateLimiter: limiter,
    failedAuthPerMinute: 3,
  });
  const statuses: number[] = [];
  // 40 addresses, one guess each: the first 10 get their own buckets (and a 401), the next share one.
  for (let i = 0; i < 40; i++) {
    const res = await api.handle({
      method: "GET",
      path: "/api/partner/products",
      headers: { "x-api-key": `ypk_test_${String(i).padStart(38, "B")}` },
      clientAddress: `198.51.100.${i}`,
    });
    statuses.push(res.status);
  }
  assert.deepEqual(statuses.slice(0, 13), Array(13).fill(401));
  assert.deepEqual(statuses.slice(13), Array(27).fill(429));
  assert.ok(limiter.size <= 11);
  // An address with its own bucket and no failures of its own left is not blocked by the overflow.
  const known = await api.handle({
    method: "GET",
    path: "/api/partner/products",
    headers: { "x-api-key": DEMO.sandboxApiKey },
    clientAddress: "198.51.100.0",
  });
  assert.equal(known.status, 200);
});
