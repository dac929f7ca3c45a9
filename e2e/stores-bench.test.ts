/**
 * bench:stores's rate-limit part (issue 28): the Redis limiter's decisions against redis-benchmark
 * on the same Redis. The flags, the reading of redis-benchmark's output and its connection flags,
 * that the yardstick's EVALSHA runs the limiter's own script (every call stores its run), and a
 * short `--decisions` run end to end. The figures themselves are the bench's, not the test's.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  connectionArgs,
  findRedisBenchmark,
  parseCsv,
  REDIS_BENCHMARK_INSTALL_HINT,
  RedisBenchmarkError,
  runRedisBenchmark,
} from "../bench/redis-yardstick.js";
import { gate } from "../packages/node-adapter/src/testing/index.js";
import { RATE_LIMIT_MANY_SCRIPT } from "../packages/store-redis/src/index.js";
import { REDIS_URL, redisReachable, testRedis } from "../packages/store-redis/src/testing/index.js";
import { runBench } from "./support/processes.js";

const STORES = "bench/stores.ts";

describe("bench:stores flags", () => {
  test("--help lists --decisions and --rounds; a bad --rounds or two parts at once is a usage error", async () => {
    // Started together: each start loads the bench's modules (about 1.5 s).
    const [help, both, zero, few] = await Promise.all([
      runBench(STORES, ["--help"]),
      runBench(STORES, ["--in-process", "--decisions"]),
      runBench(STORES, ["--decisions", "--rounds", "0"]),
      runBench(STORES, ["--decisions"], 90_000, { BENCH_REDIS_REQUESTS: "10" }),
    ]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--decisions/);
    assert.match(help.stdout, /--rounds n/);
    assert.match(help.stdout, /BENCH_REDIS_REQUESTS/);
    assert.equal(both.code, 2);
    assert.equal(
      both.stderr,
      "bench:stores: --in-process and --decisions each choose a part; give one; see --help\n",
    );
    assert.equal(zero.code, 2);
    assert.equal(
      zero.stderr,
      'bench:stores: --rounds must be an integer from 1 to 50 (got "0"); see --help\n',
    );
    assert.equal(few.code, 2);
    assert.match(few.stderr, /BENCH_REDIS_REQUESTS must be an integer of at least 1000, not 10/);
  });

  test("without redis-benchmark the bench stops at once and says how to install it", async () => {
    const missing = await runBench(STORES, ["--decisions"], 90_000, {
      REDIS_BENCHMARK: "/nonexistent/redis-benchmark",
    });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /redis-benchmark was not found/);
    assert.ok(missing.stderr.includes(REDIS_BENCHMARK_INSTALL_HINT));
    assert.equal(missing.stdout, "");
  });
});

describe("redis-yardstick.ts", () => {
  test("reads the rate and the percentiles of redis-benchmark's --csv line; other output is an error", () => {
    const csv =
      '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"\n' +
      '"EVALSHA abc 2 k k:n 1 2 3 -1","19417.48","1.338","0.216","1.239","2.439","4.111","13.831"\n';
    assert.deepEqual(parseCsv(csv), { perSecond: 19417.48, p50Ms: 1.239, p99Ms: 4.111 });
    assert.throws(() => parseCsv("ERROR: NOSCRIPT\n"), RedisBenchmarkError);
    assert.throws(() => parseCsv(csv.split("\n")[0]!), /cannot read its --csv output/);
  });

  test("connection flags from the Redis URL: host, port, user, password and database; rediss:// is refused", () => {
    assert.deepEqual(connectionArgs("redis://127.0.0.1:6379"), ["-h", "127.0.0.1", "-p", "6379"]);
    assert.deepEqual(connectionArgs("redis://localhost"), ["-h", "localhost", "-p", "6379"]);
    assert.deepEqual(connectionArgs("redis://bench:p%40ss@[::1]:6380/3"), [
      "-h",
      "::1",
      "-p",
      "6380",
      "--user",
      "bench",
      "-a",
      "p@ss",
      "--no-auth-warning",
      "--dbnum",
      "3",
    ]);
    assert.throws(() => connectionArgs("rediss://127.0.0.1:6379"), /needs a redis:\/\/ URL/);
  });
});

const redisBenchmark = findRedisBenchmark();
const services = gate({
  Redis: await redisReachable(),
  "redis-benchmark":
    redisBenchmark === undefined ? `not installed: ${REDIS_BENCHMARK_INSTALL_HINT}` : undefined,
});

services.describe("the limiter's yardstick on Redis", () => {
  services.test(
    "redis-benchmark's EVALSHA runs the limiter's own script: each call counts one hit; an error reply fails the run",
    async () => {
      const { redis, prefix } = await testRedis("yardstick");
      const sha = String(await redis.script("LOAD", RATE_LIMIT_MANY_SCRIPT));
      const zset = `${prefix}{rate:p:production}:w`;
      const result = await runRedisBenchmark(redisBenchmark!, REDIS_URL, {
        clients: 4,
        requests: 1000,
        command: ["EVALSHA", sha, "2", zset, `${zset}:n`, "1000000000", "60000", "1", "-1"],
      });
      assert.ok(result.perSecond > 0 && result.p99Ms >= result.p50Ms, JSON.stringify(result));
      assert.equal(await redis.zcard(zset), 1000);
      assert.equal(await redis.hget(`${zset}:n`, "u"), "1000");
      // A script Redis does not hold: redis-benchmark stops at the first error reply.
      await assert.rejects(
        runRedisBenchmark(redisBenchmark!, REDIS_URL, {
          clients: 1,
          requests: 10,
          command: ["EVALSHA", "0".repeat(40), "0"],
        }),
        (error: Error) => error instanceof RedisBenchmarkError && /NOSCRIPT/.test(error.message),
      );
    },
  );

  services.test(
    "`bench:stores --decisions` prints every round's rows and the medians, at most one script run a decision, and deletes its keys",
    async () => {
      const { redis } = await testRedis("stores-bench");
      const run = await runBench(STORES, ["--decisions", "--rounds", "2"], 120_000, {
        BENCH_SECONDS: "1",
        BENCH_REDIS_REQUESTS: "2000",
      });
      assert.equal(run.code, 0, run.stderr);
      assert.equal((run.stdout.match(/^ {2}round \d of 2$/gm) ?? []).length, 2, run.stdout);
      for (const row of [
        "RedisRateLimiter \\(ours, in process\\)",
        "redis-benchmark: EVALSHA of the script",
        "redis-benchmark: INCR",
      ])
        assert.equal(
          (run.stdout.match(new RegExp(`^ {4}${row} +[\\d,]+ \\w+/s {2}Redis CPU +[\\d.]+ µs`, "gm")) ?? [])
            .length,
          2,
          `${row} in ${run.stdout}`,
        );
      const runs = [...run.stdout.matchAll(/ ([\d.]+) script runs a decision$/gm)].map((m) => Number(m[1]));
      assert.equal(runs.length, 2, run.stdout);
      for (const r of runs) assert.ok(r > 0 && r <= 1, `${r} script runs a decision`);
      assert.match(run.stdout, /^ {4}ours ÷ EVALSHA +[\d.]+x \([\d.]+x-[\d.]+x\) \(same round\)$/m);
      // The bench's own key shapes under its py-bench:<tag>: prefix (the limiter's rounds, the
      // yardstick's script keys, INCR's counter); other benches use other shapes.
      for (const pattern of ["py-bench:*:r1:*", "py-bench:*:r2:*", "py-bench:*:y1:*", "py-bench:*:incr"])
        assert.deepEqual((await redis.scan("0", "MATCH", pattern, "COUNT", 100_000))[1], [], pattern);
    },
  );
});
