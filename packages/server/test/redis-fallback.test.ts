/**
 * Event intake never depends on Redis (CONTRACT §7, "When Redis is down"): two instances share one
 * Redis through a TCP proxy the test cuts. Before the cut their quota is shared; while Redis is
 * down every event is still accepted, each instance counting the same quota itself (the quota + 1st
 * on one instance is 429); once Redis answers again the quota is shared again.
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { RunningServer } from "@partner-yield/node-adapter";
import {
  eventBody,
  eventHeaders,
  eventually,
  gate,
  INBOUND,
  startTcpProxy,
  startTestServer,
  type TcpProxy,
} from "@partner-yield/node-adapter/testing";
import { connectRedis, RedisRateLimiter } from "@partner-yield/store-redis";
import { REDIS_URL, redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import { FallbackRateLimiter } from "../src/fallback-limiter.js";

const { describe, test, available } = gate({ Redis: await redisReachable() });
const redisKeys = available ? await testRedis("fallback") : undefined;
const QUOTA = 10;

describe("rate limits while Redis is down", () => {
  let proxy: TcpProxy;
  const servers: RunningServer[] = [];
  const limiters: FallbackRateLimiter[] = [];
  const switches: string[] = [];

  before(async () => {
    if (redisKeys === undefined) return;
    const target = new URL(REDIS_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    for (let i = 0; i < 2; i++) {
      const redis = await connectRedis({ url: `redis://127.0.0.1:${proxy.port}`, commandTimeoutMs: 500 });
      const limiter = new FallbackRateLimiter({
        primary: new RedisRateLimiter({ redis, ownsClient: true, keyPrefix: redisKeys.prefix }),
        probeMs: 100,
        onSwitch: (local) => switches.push(`${i}:${local ? "local" : "shared"}`),
      });
      limiters.push(limiter);
      servers.push(
        await startTestServer({
          rateLimiter: limiter,
          rateLimitQuota: QUOTA,
          readinessChecks: { rate_limits: () => limiter.ping() },
        }),
      );
    }
  });
  after(async () => {
    if (!available) return;
    await Promise.all(servers.map((s) => s.close()));
    await proxy.close();
  });

  let n = 0;
  /** One signed event to instance `i`: its status and the remaining quota it reports. */
  const post = async (i: number) => {
    const body = eventBody();
    const res = await fetch(servers[i]!.url + INBOUND, {
      method: "POST",
      headers: eventHeaders(body, `fallback-${n++}`),
      body,
    });
    await res.text();
    const remaining = /;r=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1];
    return { status: res.status, remaining: remaining === undefined ? undefined : Number(remaining) };
  };

  test("shared, then per instance with the same quota while Redis is down (events keep flowing), then shared again", async () => {
    // Shared: four events over both instances leave 6.
    for (const i of [0, 1, 0]) assert.equal((await post(i)).status, 200);
    assert.deepEqual(await post(1), { status: 200, remaining: QUOTA - 4 });

    proxy.cut("refuse");
    // Every event is accepted; instance 0 counts its own quota from nothing.
    for (let k = 1; k <= QUOTA; k++) assert.deepEqual(await post(0), { status: 200, remaining: QUOTA - k });
    assert.equal((await post(0)).status, 429, "the quota still holds, per instance");
    assert.deepEqual(await post(1), { status: 200, remaining: QUOTA - 1 }, "instance 1 counts its own");
    assert.deepEqual(switches.sort(), ["0:local", "1:local"]);
    const ready = await fetch(`${servers[0]!.url}/readyz`);
    assert.equal(ready.status, 200, "Redis down does not take the instance out of the balancer");
    assert.deepEqual(await ready.json(), { status: "degraded", stores: { rate_limits: "unavailable" } });

    proxy.restore();
    await eventually(() => limiters.every((l) => !l.local), 10_000, "both limiters to use Redis again");
    // Redis kept the four shared hits; the next two, one on each instance, are counted together.
    assert.deepEqual(await post(0), { status: 200, remaining: QUOTA - 5 });
    assert.deepEqual(await post(1), { status: 200, remaining: QUOTA - 6 });
    assert.deepEqual(switches.slice(2).sort(), ["0:shared", "1:shared"]);
  });
});
