/**
 * How `RedisRateLimiter` groups a partner's hits into script runs, against a stand-in client whose
 * runs answer when the test says: the hits of one turn share a run; hits made while a key's run is
 * in flight wait for its answer and go out together in the next run, never in a second run racing
 * the first; other keys are not held back; a failed run fails its hits only, and the key goes on;
 * the keys ready in one turn go out as one batch run (a command), a lone key as a run of its own.
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
  /** This key's run fails: alone, the command fails; in a batch run, the key's reply is an error. */
  fail(error: Error): void;
}

interface Batch {
  /** The run set of each key, in order. */
  readonly keys: string[];
  /** The whole command fails (a connection reset): every key's hits fail. */
  fail(error: Error): void;
}

/**
 * A stand-in client: each key's script run is recorded in `runs` and answered by the test, alone
 * or as part of a batch run (recorded in `batches`), whose reply goes back when each of its keys
 * is answered or failed.
 */
function standIn(cluster = false): { redis: Redis; runs: Run[]; batches: Batch[] } {
  const runs: Run[] = [];
  const batches: Batch[] = [];
  const redis = {
    isCluster: cluster,
    defineCommand: () => undefined,
    pipeline: () => {
      throw new Error("the limiter sends no pipeline");
    },
    partnerYieldRateLimitBatch: (numKeys: number, ...rest: (string | number)[]) =>
      new Promise((resolve, reject) => {
        const count = numKeys / 2;
        const keys = Array.from({ length: count }, (_, i) => String(rest[2 * i]));
        const replies: unknown[] = new Array(count);
        let left = count;
        const settle = (i: number, reply: unknown) => {
          replies[i] = reply;
          if (--left === 0) resolve(replies);
        };
        batches.push({ keys, fail: reject });
        for (const [i, key] of keys.entries())
          runs.push({
            key,
            n: Number(rest[numKeys + 1 + 3 * i + 2]),
            answer: (reply) => settle(i, reply),
            fail: (error) => settle(i, [-1, error.message]),
          });
      }),
    partnerYieldRateLimitMany: (zset: string, _seq: string, _limit: number, _window: number, n: number) =>
      new Promise((resolve, reject) => {
        runs.push({ key: zset, n, answer: resolve, fail: reject });
      }),
    partnerYieldRateLimit: () => Promise.reject(new Error("not used")),
    partnerYieldFailedAuth: () => Promise.reject(new Error("not used")),
  } as unknown as Redis;
  return { redis, runs, batches };
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

  test("the keys ready in the same turn go out as one batch run, and again together after it", async () => {
    const { redis, runs, batches } = standIn();
    const limiter = new RedisRateLimiter({ redis, keyPrefix: "t:" });
    const first = [limiter.hit("p", 10, 60_000), limiter.hit("q", 10, 60_000), limiter.hit("p", 10, 60_000)];
    await nextTurn();
    assert.deepEqual(
      batches.map((b) => b.keys),
      [["t:{p}:w", "t:{q}:w"]],
      "one run for the turn's two keys",
    );
    assert.deepEqual(
      runs.map((r) => r.n),
      [2, 1],
    );
    // Hits of both keys while their run is in flight; then the run answers.
    const second = [limiter.hit("q", 10, 60_000), limiter.hit("p", 10, 60_000)];
    await nextTurn();
    assert.equal(runs.length, 2, "no run races the one in flight");
    runs[1]!.fail(new Error("WRONGTYPE Operation against a key holding the wrong kind of value"));
    runs[0]!.answer([2, 0, 60_000, 0]);
    const [p1, q1, p2] = await Promise.allSettled(first);
    assert.deepEqual(
      [p1, p2].map((r) => (r?.status === "fulfilled" ? r.value.remaining : r?.reason)),
      [9, 8],
    );
    assert.ok(
      q1?.status === "rejected" &&
        q1.reason instanceof StoreUnavailableError &&
        /WRONGTYPE/.test(q1.reason.message),
      "q's refused command fails q's hit only",
    );
    await nextTurn();
    assert.deepEqual(
      batches[1]?.keys,
      ["t:{q}:w", "t:{p}:w"],
      "the keys answered together go out in one run",
    );
    runs[2]!.answer([1, 0, 60_000, 0]);
    runs[3]!.answer([1, 2, 59_000, 0]);
    assert.deepEqual(
      (await Promise.all(second)).map((d) => d.remaining),
      [9, 7],
    );
    // A key alone again: a run of its own, no batch.
    const alone = limiter.hit("p", 10, 60_000);
    await nextTurn();
    assert.equal(batches.length, 2);
    assert.equal(runs.length, 5);
    runs[4]!.answer([1, 3, 58_000, 0]);
    assert.equal((await alone).remaining, 6);
  });

  test("a batch run that fails as a whole fails every hit it carried with 503, and the keys go on", async () => {
    const { redis, runs, batches } = standIn();
    const limiter = new RedisRateLimiter({ redis, keyPrefix: "t:" });
    const doomed = [limiter.hit("p", 10, 60_000), limiter.hit("q", 10, 60_000)];
    await nextTurn();
    const waiting = [limiter.hit("p", 10, 60_000), limiter.hit("q", 10, 60_000)];
    await nextTurn();
    batches[0]!.fail(new Error("connection reset"));
    for (const hit of doomed) await assert.rejects(hit, StoreUnavailableError);
    await nextTurn();
    assert.deepEqual(batches[1]?.keys, ["t:{p}:w", "t:{q}:w"]);
    runs[2]!.answer([1, 0, 60_000, 0]);
    runs[3]!.answer([1, 0, 60_000, 0]);
    assert.deepEqual(
      (await Promise.all(waiting)).map((d) => d.remaining),
      [9, 9],
    );
  });

  test("at most 64 keys a batch run: a turn with 70 keys sends two", async () => {
    const { redis, runs, batches } = standIn();
    const limiter = new RedisRateLimiter({ redis, keyPrefix: "t:" });
    const hits = Array.from({ length: 70 }, (_, i) => limiter.hit(`k${i}`, 10, 60_000));
    await nextTurn();
    assert.deepEqual(
      batches.map((b) => b.keys.length),
      [64, 6],
    );
    assert.deepEqual(
      runs.map((r) => r.key),
      Array.from({ length: 70 }, (_, i) => `t:{k${i}}:w`),
    );
    for (const run of runs) run.answer([1, 0, 60_000, 0]);
    assert.ok((await Promise.all(hits)).every((d) => d.allowed && d.remaining === 9));
  });

  test("on a Redis Cluster client the keys of one turn go out one run each, never a batch", async () => {
    const { redis, runs, batches } = standIn(true);
    const limiter = new RedisRateLimiter({ redis, keyPrefix: "t:" });
    const hits = [limiter.hit("p", 10, 60_000), limiter.hit("q", 10, 60_000)];
    await nextTurn();
    assert.deepEqual(batches, [], "keys of several slots in no run");
    assert.deepEqual(
      runs.map((r) => r.key),
      ["t:{p}:w", "t:{q}:w"],
    );
    runs[0]!.answer([1, 0, 60_000, 0]);
    runs[1]!.answer([1, 4, 60_000, 0]);
    assert.deepEqual(
      (await Promise.all(hits)).map((d) => d.remaining),
      [9, 5],
    );
  });
});
