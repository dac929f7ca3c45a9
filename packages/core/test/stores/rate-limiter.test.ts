import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { MemoryRateLimiter } from "../../src/index.js";
import { fcParams } from "../../src/testing/index.js";

const WINDOW = 60_000;

function clock(start = 1_000_000) {
  const c = { now: start };
  return { c, limiter: new MemoryRateLimiter({ now: () => c.now }) };
}

test("allows exactly the quota, then refuses until the oldest hit leaves the window", async () => {
  const { c, limiter } = clock();
  for (let i = 0; i < 5; i++) {
    const d = await limiter.hit("p", 5, WINDOW);
    assert.equal(d.allowed, true);
    assert.equal(d.remaining, 4 - i);
    c.now += 1000;
  }
  const refused = await limiter.hit("p", 5, WINDOW);
  assert.equal(refused.allowed, false);
  assert.equal(refused.remaining, 0);
  // Oldest hit at start; now = start + 5 s; it leaves at start + 60 s → 55 s.
  assert.equal(refused.retryAfterSeconds, 55);
  c.now += 54_999;
  assert.equal((await limiter.hit("p", 5, WINDOW)).allowed, false);
  c.now += 1;
  assert.equal((await limiter.hit("p", 5, WINDOW)).allowed, true);
});

test("no fixed-window edge: a burst at the end of one minute blocks the start of the next", async () => {
  const { c, limiter } = clock(59_000);
  for (let i = 0; i < 10; i++) assert.equal((await limiter.hit("p", 10, WINDOW)).allowed, true);
  c.now = 61_000; // a fixed window would have reset at 60 000
  assert.equal((await limiter.hit("p", 10, WINDOW)).allowed, false);
});

test("refused hits are not counted", async () => {
  const { c, limiter } = clock();
  for (let i = 0; i < 3; i++) await limiter.hit("p", 3, WINDOW);
  for (let i = 0; i < 50; i++) assert.equal((await limiter.hit("p", 3, WINDOW)).allowed, false);
  c.now += WINDOW;
  for (let i = 0; i < 3; i++) assert.equal((await limiter.hit("p", 3, WINDOW)).allowed, true);
});

test("peek counts nothing", async () => {
  const { limiter } = clock();
  for (let i = 0; i < 10; i++) assert.equal((await limiter.peek("p", 1, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("p", 1, WINDOW)).allowed, true);
  assert.equal((await limiter.peek("p", 1, WINDOW)).allowed, false);
});

test("a key with nothing counted gets the full quota of the limit asked, whatever was asked before", async () => {
  const { c, limiter } = clock();
  const idle = { allowed: true, remaining: 0, resetSeconds: 0, retryAfterSeconds: 0 };
  assert.deepEqual(await limiter.peek("a", 5, WINDOW), { ...idle, limit: 5, remaining: 5 });
  assert.deepEqual(await limiter.peek("b", 7, WINDOW), { ...idle, limit: 7, remaining: 7 });
  assert.deepEqual(await limiter.peek("a", 5, WINDOW), { ...idle, limit: 5, remaining: 5 });
  // Counted, then expired: nothing counted again.
  assert.equal((await limiter.hit("a", 5, WINDOW)).remaining, 4);
  assert.deepEqual(await limiter.peek("a", 5, WINDOW), {
    allowed: true,
    limit: 5,
    remaining: 4,
    resetSeconds: 60,
    retryAfterSeconds: 0,
  });
  c.now += WINDOW;
  assert.deepEqual(await limiter.peek("a", 5, WINDOW), { ...idle, limit: 5, remaining: 5 });
});

test("resetSeconds is when the oldest counted hit leaves; retryAfter is never earlier", async () => {
  const { c, limiter } = clock();
  const first = await limiter.hit("p", 2, WINDOW);
  assert.equal(first.resetSeconds, 60);
  c.now += 30_500;
  const second = await limiter.hit("p", 2, WINDOW);
  assert.equal(second.resetSeconds, 30); // 29.5 s, rounded up
  const refused = await limiter.hit("p", 2, WINDOW);
  assert.ok(refused.retryAfterSeconds >= refused.resetSeconds);
  assert.equal(refused.retryAfterSeconds, 30);
});

test("property: in ANY 60-second interval at most `quota` hits are allowed (exact rolling window)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20 }),
      fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 300 }),
      async (quota, gaps) => {
        const { c, limiter } = clock();
        const allowed: number[] = [];
        for (const gap of gaps) {
          c.now += gap;
          if ((await limiter.hit("k", quota, WINDOW)).allowed) allowed.push(c.now);
        }
        for (let i = 0; i < allowed.length; i++) {
          let j = i;
          while (j < allowed.length && allowed[j]! - allowed[i]! < WINDOW) j++;
          if (j - i > quota) return false;
        }
        // And it is not stricter than that: a refused hit saw `quota` allowed hits in its window.
        return true;
      },
    ),
    fcParams(process.env),
  );
});

test("property: a hit is refused only when `quota` hits were allowed in the preceding 60 s", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 10 }),
      fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 200 }),
      async (quota, gaps) => {
        const { c, limiter } = clock();
        const allowed: number[] = [];
        for (const gap of gaps) {
          c.now += gap;
          const d = await limiter.hit("k", quota, WINDOW);
          const inWindow = allowed.filter((t) => t > c.now - WINDOW).length;
          if (d.allowed !== inWindow < quota) return false;
          if (d.allowed) allowed.push(c.now);
        }
        return true;
      },
    ),
    fcParams(process.env),
  );
});

test("a quota of 10^9 allocates nothing up front; memory follows the hits actually seen", async () => {
  const { c, limiter } = clock();
  assert.equal(limiter.size, 0);
  await limiter.peek("load", 1_000_000_000, WINDOW);
  assert.equal(limiter.size, 0);
  for (let i = 0; i < 10_000; i++) {
    await limiter.hit("load", 1_000_000_000, WINDOW);
    if (i % 100 === 0) c.now += 1;
  }
  assert.equal(limiter.size, 1);
});

test("idle partners and addresses are forgotten", async () => {
  const { c, limiter } = clock();
  for (let i = 0; i < 500; i++) await limiter.hit(`auth:10.0.0.${i}`, 30, WINDOW);
  assert.equal(limiter.size, 500);
  c.now += WINDOW + 1;
  await limiter.hit("someone-else", 30, WINDOW);
  assert.equal(limiter.size, 1);
});

test("property: waiting retryAfterSeconds after a refusal is always enough", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 5 }),
      fc.array(fc.integer({ min: 0, max: 30_000 }), { minLength: 1, maxLength: 50 }),
      async (quota, gaps) => {
        const { c, limiter } = clock();
        for (const gap of gaps) {
          c.now += gap;
          const d = await limiter.hit("k", quota, WINDOW);
          if (d.allowed) continue;
          const saved = c.now;
          c.now += d.retryAfterSeconds * 1000;
          if (!(await limiter.peek("k", quota, WINDOW)).allowed) return false;
          c.now = saved;
        }
        return true;
      },
    ),
    fcParams(process.env),
  );
});

test("retryAfterSeconds rounds up: 29.4 s is 30, not 29", async () => {
  const { c, limiter } = clock();
  await limiter.hit("p", 1, WINDOW);
  c.now += 30_600;
  const refused = await limiter.hit("p", 1, WINDOW);
  assert.equal(refused.retryAfterSeconds, 30);
  assert.equal(refused.resetSeconds, 30);
});
