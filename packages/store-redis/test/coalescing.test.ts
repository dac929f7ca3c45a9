/**
 * How `RedisRateLimiter` groups a partner's hits into script runs, against a stand-in client whose
 * runs answer when the test says: the hits of one turn share a run; hits made while a key's run is
 * in flight wait for its answer and go out together in the next run, never in a second run racing
 * the first; other keys are not held back; a failed run fails its hits only, and the key goes on.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { StoreUnavailableError } from "@partner-yield/core";
import type { Redis } from "ioredis";
import { RedisRateLimiter } from "../src/index.js";

interface Run {
  readonly key: string;
  readonly n: number;
  answer(reply: [number, number, number, number]): void;
  fail(error: Error): void;
}

/** A stand-in client: each script run is recorded and answered by the test. */
function standIn(): { redis: Redis; runs: Run[] } {
  const runs: Run[] = [];
  const redis = {
    defineCommand: () => undefined,
    partnerYieldRateLimitMany: (zset: string, _seq: string, _limit: number, _window: number, n: number) =>
      new Promise((resolve, reject) => {
        runs.push({ key: zset, n, answer: resolve, fail: reject });
      }),
    partnerYieldRateLimit: () => Promise.reject(new Error("not used")),
    partnerYieldFailedAuth: () => Promise.reject(new Error("not used")),
  } as unknown as Redis;
  return { redis, runs };
}

describe("RedisRateLimiter: script runs per key", () => {
  test("one turn's hits share a run; hits made while it is in flight go out together after it", async () => {
    const { redis, runs } = standIn();
    const limiter = new RedisRateLimiter({ redis, keyPrefix: "t:" });
    const first = [limiter.hit("p", 10, 60_000), limiter.hit("p", 10, 60_000)];
    await nextTurn();
    assert.deepEqual(
      runs.map((r) => r.n),
      [2],
    );
    // Two more turns of hits while the run is in flight: no second run yet.
    const second = [limiter.hit("p", 10, 60_000)];
    await nextTurn();
    second.push(limiter.hit("p", 10, 60_000), limiter.hit("p", 10, 60_000));
    await nextTurn();
    assert.equal(runs.length, 1, "no run races the one in flight");
    // Another key is not held back by p's run.
    const other = limiter.hit("q", 10, 60_000);
    await nextTurn();
    assert.deepEqual(
      runs.map((r) => [r.key, r.n]),
      [
        ["t:{p}:w", 2],
        ["t:{q}:w", 1],
      ],
    );
    runs[0]!.answer([2, 0, 60_000, 0]);
    assert.deepEqual(
      (await Promise.all(first)).map((d) => d.remaining),
      [9, 8],
    );
    await nextTurn();
    assert.deepEqual(
      runs.map((r) => r.n),
      [2, 1, 3],
      "the three waiting hits in one run",
    );
    // 3 hits, 2 counted (limit 10, 8 used): the third refused, as one after the other.
    runs[2]!.answer([2, 8, 59_000, 58_500]);
    assert.deepEqual(
      (await Promise.all(second)).map((d) => [d.allowed, d.remaining, d.retryAfterSeconds]),
      [
        [true, 1, 0],
        [true, 0, 0],
        [false, 0, 59],
      ],
    );
    runs[1]!.answer([1, 0, 60_000, 0]);
    assert.equal((await other).remaining, 9);
  });

  test("a failed run fails its own hits with 503, and the key's next hits go out", async () => {
    const { redis, runs } = standIn();
    const limiter = new RedisRateLimiter({ redis, keyPrefix: "t:" });
    const doomed = limiter.hit("p", 10, 60_000);
    await nextTurn();
    const waiting = limiter.hit("p", 10, 60_000);
    await nextTurn();
    runs[0]!.fail(new Error("connection reset"));
    await assert.rejects(doomed, StoreUnavailableError);
    await nextTurn();
    assert.equal(runs.length, 2);
    runs[1]!.answer([1, 0, 60_000, 0]);
    assert.equal((await waiting).allowed, true);
  });
});
