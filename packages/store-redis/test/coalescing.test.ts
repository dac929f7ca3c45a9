/**
 * How `RedisRateLimiter` groups a partner's hits into script runs, against a stand-in client whose
 * runs answer when the test says: the hits of one turn share a run; hits made while a key's run is
 * in flight wait for its answer and go out together in the next run, never in a second run racing
 * the first; other keys are not held back; a failed run fails its hits only, and the key goes on;
 * the runs of several keys ready in one turn go out as one pipeline, a lone run as a command.
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

type Callback = (error: Error | null, reply?: [number, number, number, number]) => void;

/**
 * A stand-in client: each script run is recorded and answered by the test; `pipelines` holds the
 * keys of each pipeline executed, in order (a run sent alone is in none).
 */
function standIn(cluster = false): { redis: Redis; runs: Run[]; pipelines: string[][] } {
  const runs: Run[] = [];
  const pipelines: string[][] = [];
  const redis = {
    isCluster: cluster,
    defineCommand: () => undefined,
    pipeline: () => {
      const queued: Run[] = [];
      const pipeline = {
        partnerYieldRateLimitMany: (
          zset: string,
          _seq: string,
          _limit: number,
          _window: number,
          n: number,
          _now: number,
          callback: Callback,
        ) => {
          queued.push({
            key: zset,
            n,
            answer: (reply) => callback(null, reply),
            fail: (error) => callback(error),
          });
          return pipeline;
        },
        exec: () => {
          pipelines.push(queued.map((r) => r.key));
          runs.push(...queued);
          return new Promise(() => undefined);
        },
      };
      return pipeline;
    },
    partnerYieldRateLimitMany: (zset: string, _seq: string, _limit: number, _window: number, n: number) =>
      new Promise((resolve, reject) => {
        runs.push({ key: zset, n, answer: resolve, fail: reject });
      }),
    partnerYieldRateLimit: () => Promise.reject(new Error("not used")),
    partnerYieldFailedAuth: () => Promise.reject(new Error("not used")),
  } as unknown as Redis;
  return { redis, runs, pipelines };
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

  test("the runs of keys ready in the same turn go out as one pipeline, and again together after it", async () => {
    const { redis, runs, pipelines } = standIn();
    const limiter = new RedisRateLimiter({ redis, keyPrefix: "t:" });
    const first = [limiter.hit("p", 10, 60_000), limiter.hit("q", 10, 60_000), limiter.hit("p", 10, 60_000)];
    await nextTurn();
    assert.deepEqual(pipelines, [["t:{p}:w", "t:{q}:w"]], "one pipeline for the turn's two keys");
    assert.deepEqual(
      runs.map((r) => r.n),
      [2, 1],
    );
    // Hits of both keys while their runs are in flight; then both runs answer in one turn.
    const second = [limiter.hit("q", 10, 60_000), limiter.hit("p", 10, 60_000)];
    await nextTurn();
    assert.equal(runs.length, 2, "no run races the ones in flight");
    runs[1]!.fail(new Error("connection reset"));
    runs[0]!.answer([2, 0, 60_000, 0]);
    const [p1, q1, p2] = await Promise.allSettled(first);
    assert.deepEqual(
      [p1, p2].map((r) => (r?.status === "fulfilled" ? r.value.remaining : r?.reason)),
      [9, 8],
    );
    assert.ok(
      q1?.status === "rejected" && q1.reason instanceof StoreUnavailableError,
      "q's failed run fails q's hit only",
    );
    await nextTurn();
    assert.deepEqual(
      pipelines[1],
      ["t:{q}:w", "t:{p}:w"],
      "the keys answered in one turn go out in one pipeline",
    );
    runs[2]!.answer([1, 0, 60_000, 0]);
    runs[3]!.answer([1, 2, 59_000, 0]);
    assert.deepEqual(
      (await Promise.all(second)).map((d) => d.remaining),
      [9, 7],
    );
    // A key alone again: a plain command, no pipeline.
    const alone = limiter.hit("p", 10, 60_000);
    await nextTurn();
    assert.equal(pipelines.length, 2);
    assert.equal(runs.length, 5);
    runs[4]!.answer([1, 3, 58_000, 0]);
    assert.equal((await alone).remaining, 6);
  });

  test("on a Redis Cluster client the runs of one turn go out one command each, never a pipeline", async () => {
    const { redis, runs, pipelines } = standIn(true);
    const limiter = new RedisRateLimiter({ redis, keyPrefix: "t:" });
    const hits = [limiter.hit("p", 10, 60_000), limiter.hit("q", 10, 60_000)];
    await nextTurn();
    assert.deepEqual(pipelines, [], "keys of several slots in no pipeline");
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
