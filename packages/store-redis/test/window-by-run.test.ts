/**
 * A partner's window is stored by run (one sorted-set member per script run, with its number of
 * hits), and still decides every hit as `MemoryRateLimiter` does hit by hit: runs of several hits
 * at different instants, refusals that wait for a hit inside a run of many, peeks, and the count
 * summed from the set again when the hash holding it is lost.
 */
import assert from "node:assert/strict";
import { MemoryRateLimiter, type RateDecision } from "@partner-yield/core";
import { gate } from "@partner-yield/node-adapter/testing";
import { redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import { RedisRateLimiter } from "../src/index.js";

const { describe, test } = gate({ Redis: await redisReachable() });

const WINDOW = 60_000;
const LIMIT = 10;

describe("RedisRateLimiter: the window stored by run", () => {
  test("runs of many hits decide each hit as memory does one by one; one member per run", async () => {
    const { redis, prefix } = await testRedis("window-by-run");
    let now = 1_700_000_000_000;
    const clock = () => now;
    const limiter = new RedisRateLimiter({ redis, keyPrefix: prefix, now: clock });
    const reference = new MemoryRateLimiter({ now: clock });
    const key = "rate:p1:sandbox";
    /** `n` hits made in one turn (one run in Redis), and the same n one after the other in memory. */
    async function together(n: number, limit = LIMIT): Promise<RateDecision[]> {
      const ours = await Promise.all(Array.from({ length: n }, () => limiter.hit(key, limit, WINDOW)));
      const expected: RateDecision[] = [];
      for (let i = 0; i < n; i++) expected.push(await reference.hit(key, limit, WINDOW));
      assert.deepEqual(ours, expected, `${n} hits at ${now}`);
      return ours;
    }
    async function peekBoth(): Promise<RateDecision> {
      const ours = await limiter.peek(key, LIMIT, WINDOW);
      assert.deepEqual(ours, await reference.peek(key, LIMIT, WINDOW), `peek at ${now}`);
      return ours;
    }
    const zset = `${prefix}{${key}}:w`;

    assert.equal((await peekBoth()).remaining, LIMIT);
    await together(4);
    now += 10_000;
    await together(3);
    now += 10_000;
    await together(3);
    assert.equal(await redis.zcard(zset), 3, "one member per run");
    assert.equal(await redis.hget(`${zset}:n`, "u"), "10");
    now += 10_000;
    // Full: a refused hit waits for the oldest run (4 hits at the start) to leave, 30 s from now.
    const [refused] = await together(1);
    assert.equal(refused!.allowed, false);
    assert.equal(refused!.retryAfterSeconds, 30);
    assert.equal((await peekBoth()).allowed, false);
    // The first run leaves: 4 places; the fifth hit of this run waits for the second run (10 s).
    now += 30_001;
    const five = await together(5);
    assert.deepEqual(
      five.map((d) => d.allowed),
      [true, true, true, true, false],
    );
    assert.equal(five[4]!.retryAfterSeconds, 10);
    assert.equal(await redis.zcard(zset), 3, "the first run removed, this run's 4 counted hits added as one");
    // The count lost (the hash deleted, the set kept): summed from the set again.
    await redis.del(`${zset}:n`);
    await peekBoth();
    await together(2);
    assert.equal(await redis.hget(`${zset}:n`, "u"), "10");
    // Read together; the hash was given the set's remaining time, so they end within a few ms.
    const [setTtl, hashTtl] = await Promise.all([redis.pttl(zset), redis.pttl(`${zset}:n`)]);
    assert.ok(
      hashTtl > 0 && Math.abs(hashTtl - setTtl) <= 100,
      `the hash made again expires with the set (${hashTtl} against ${setTtl} ms)`,
    );
    // The quota lowered to 6 with 10 hits in the window (runs of 3, 3 and 4, at +10 s, +20 s and
    // +60 s): a hit waits for the 5th oldest, inside the second run, which leaves at +80 s.
    now += 5_000;
    const [lowered] = await together(1, 6);
    assert.equal(lowered!.allowed, false);
    assert.equal(lowered!.retryAfterSeconds, 15);
    // The set lost while the hash is kept: the window is empty as Redis holds it (the reference,
    // which still holds its hits, is left out of this step).
    await redis.del(zset);
    assert.equal((await limiter.peek(key, LIMIT, WINDOW)).remaining, LIMIT);
    // Everything ages out: the window is empty and the keys expire.
    now += WINDOW + 1;
    assert.equal((await peekBoth()).remaining, LIMIT);
    await together(LIMIT + 2);
  });
});
