/**
 * At most one round trip per rate-limit decision: the limiter's client sends Redis exactly one
 * command per `hit` or `peek` made alone, and one for all the hits of one key made in the same turn
 * (each script as EVAL the first time on a connection and EVALSHA after); the clock and the
 * expiries are read and set inside the script, never as TIME or PEXPIRE calls of their own. Seen
 * from Redis, through MONITOR, so it holds whatever the client library does. The hits sharing a
 * command get the answers they would get one after the other.
 */
import assert from "node:assert/strict";
import { StoreUnavailableError } from "@partner-yield/core";
import { uniqueTag } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { deleteKeys, REDIS_URL, redisReachable } from "@partner-yield/store-redis/testing";
import type { Redis } from "ioredis";
import { connectRedis, RedisRateLimiter } from "../src/index.js";

const { describe, test } = gate({ Redis: await redisReachable() });

describe("RedisRateLimiter round trips", () => {
  test("each decision is one command from the client, the script; TIME and PEXPIRE run inside it", async () => {
    const redis = await connectRedis({ url: REDIS_URL, commandTimeoutMs: 5000 });
    let monitor: Redis | undefined;
    const prefix = `py-stores:round-trips:${uniqueTag()}:`;
    try {
      const watcher = await startMonitor(redis);
      monitor = watcher;
      const ours = `${redis.stream.localAddress}:${redis.stream.localPort}`;
      const fromUs: string[][] = [];
      const fromScripts: string[] = [];
      const marker = `end-${uniqueTag()}`;
      const seenMarker = new Promise<void>((resolve) => {
        watcher.on("monitor", (_time: string, args: string[], source: string) => {
          if (source === ours) {
            if (args[0]?.toLowerCase() === "echo" && args[1] === marker) resolve();
            else fromUs.push(args);
          } else if (source === "lua" && args.some((a) => a.startsWith(prefix))) {
            fromScripts.push(args[0]!.toLowerCase());
          }
        });
      });
      const limiter = new RedisRateLimiter({ redis, keyPrefix: prefix });
      // One after the other (the last two refused), then 20 at once in one turn (one command),
      // then 6 at once over a limit of 4, then peeks.
      const alone = [];
      for (let i = 0; i < 5; i++) alone.push(await limiter.hit("partner-a", 3, 60_000));
      assert.deepEqual(
        alone.map((d) => [d.allowed, d.remaining]),
        [
          [true, 2],
          [true, 1],
          [true, 0],
          [false, 0],
          [false, 0],
        ],
      );
      const together = await Promise.all(
        Array.from({ length: 20 }, () => limiter.hit("partner-b", 100, 60_000)),
      );
      assert.deepEqual(
        together.map((d) => d.remaining),
        Array.from({ length: 20 }, (_, i) => 99 - i),
        "in the order they were made, as one after the other",
      );
      assert.ok(together.every((d) => d.allowed && d.resetSeconds === 60));
      const over = await Promise.all(Array.from({ length: 6 }, () => limiter.hit("partner-d", 4, 60_000)));
      assert.deepEqual(
        over.map((d) => [d.allowed, d.remaining, d.retryAfterSeconds]),
        [
          [true, 3, 0],
          [true, 2, 0],
          [true, 1, 0],
          [true, 0, 0],
          [false, 0, 60],
          [false, 0, 60],
        ],
      );
      await limiter.peek("partner-a", 3, 60_000);
      await limiter.peek("partner-c", 3, 60_000);
      await redis.echo(marker);
      // A monitor that stopped delivering fails the test instead of hanging the file.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        seenMarker,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("MONITOR did not show the marker within 30 s")), 30_000);
        }),
      ]).finally(() => clearTimeout(timer));
      assert.equal(fromUs.length, 9, JSON.stringify(fromUs.map((a) => a[0])));
      for (const args of fromUs) assert.match(args[0]!.toLowerCase(), /^(eval|evalsha)$/);
      // One script for a partner's quota: hits alone or together and peeks (n = 0).
      assert.equal(fromUs.filter((a) => a[0]!.toLowerCase() === "eval").length, 1, "the script is sent once");
      assert.ok(fromScripts.includes("pexpire"), "the expiries are set by the script");
      await deleteKeys(redis, prefix);
    } finally {
      monitor?.disconnect();
      redis.disconnect();
    }
  });
});

describe("RedisRateLimiter writes", () => {
  test("the runs of several keys made in one turn leave in one write, each key answered as alone", async () => {
    const redis = await connectRedis({ url: REDIS_URL, commandTimeoutMs: 5000 });
    const prefix = `py-stores:writes:${uniqueTag()}:`;
    try {
      const limiter = new RedisRateLimiter({ redis, keyPrefix: prefix });
      await limiter.hit("warm", 5, 60_000); // the script loaded on this connection
      const socket = redis.stream;
      const write = socket.write;
      let writes = 0;
      socket.write = function (this: typeof socket, ...args: Parameters<typeof write>) {
        writes++;
        return write.apply(this, args);
      } as typeof write;
      try {
        const hits = ["k1", "k2", "k3", "k1"].map((key) => limiter.hit(key, 5, 60_000));
        const decisions = await Promise.all(hits);
        assert.deepEqual(
          decisions.map((d) => d.remaining),
          [4, 4, 4, 3],
        );
        assert.equal(writes, 1, "three keys' runs, one write");
        writes = 0;
        assert.equal((await limiter.hit("k2", 5, 60_000)).remaining, 3);
        assert.equal(writes, 1, "a lone run, one write");
      } finally {
        socket.write = write;
      }
      await deleteKeys(redis, prefix);
    } finally {
      redis.disconnect();
    }
  });
});

describe("RedisRateLimiter batch runs", () => {
  test("a key Redis refuses (another type under the prefix) fails its own hits only; the other keys of the run are decided", async () => {
    const redis = await connectRedis({ url: REDIS_URL, commandTimeoutMs: 5000 });
    const prefix = `py-stores:batch-error:${uniqueTag()}:`;
    try {
      const limiter = new RedisRateLimiter({ redis, keyPrefix: prefix });
      await redis.set(`${prefix}{broken}:w`, "not a sorted set");
      const [good, broken, other] = await Promise.allSettled([
        limiter.hit("good", 5, 60_000),
        limiter.hit("broken", 5, 60_000),
        limiter.hit("other", 5, 60_000),
      ]);
      assert.deepEqual(
        [good, other].map((r) =>
          r.status === "fulfilled" ? [r.value.allowed, r.value.remaining] : r.reason,
        ),
        [
          [true, 4],
          [true, 4],
        ],
      );
      assert.ok(
        broken.status === "rejected" &&
          broken.reason instanceof StoreUnavailableError &&
          /WRONGTYPE/.test(broken.reason.message),
        String(broken.status === "rejected" ? broken.reason : "allowed"),
      );
      assert.equal(await redis.get(`${prefix}{broken}:w`), "not a sorted set", "left as it was");
      assert.equal((await limiter.hit("good", 5, 60_000)).remaining, 3, "the limiter goes on");
      await deleteKeys(redis, prefix);
    } finally {
      redis.disconnect();
    }
  });
});

/**
 * A MONITOR connection. ioredis can fail to enter monitor mode when other clients keep Redis busy
 * (a monitored line arrives with MONITOR's own reply: "Command queue state error"): each failed
 * attempt is closed and another made, at most five. The connection is made here as
 * `redis.monitor()` makes it (a duplicate in monitor mode), so a failed attempt closes the very
 * connection it opened: `duplicate().monitor()` would open a second one that the first cannot
 * close, and one left open keeps the test file's process from exiting.
 */
async function startMonitor(redis: Redis): Promise<Redis> {
  for (let attempt = 1; ; attempt++) {
    const connection = redis.duplicate({ monitor: true, lazyConnect: false });
    const entered = new Promise<Redis>((resolve, reject) => {
      connection.once("monitoring", () => resolve(connection));
      connection.once("error", reject);
    });
    try {
      // Bounded: on a busy Redis the MONITOR handshake has been seen to hang without an error.
      const monitor = await withinMs(entered, 5000, "MONITOR did not start within 5 s");
      monitor.on("error", () => undefined);
      return monitor;
    } catch (error) {
      connection.on("error", () => undefined);
      connection.disconnect();
      if (attempt === 5) throw error;
    }
  }
}

function withinMs<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
