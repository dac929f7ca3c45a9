/**
 * The client-side throttle: a token bucket in virtual time, and the HTTP client honouring
 * Retry-After on 429 (GET retried, POST never).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { HttpClient, parseRetryAfter } from "../src/http/client.js";
import { type Clock, defaultBurst, TokenBucket } from "../src/throttle.js";

/** A clock whose sleep advances virtual time instantly. */
function virtualClock(): Clock & { readonly sleeps: number[] } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

describe("TokenBucket", () => {
  test("lets a burst through at once, then one request per 60 s / rate", async () => {
    const clock = virtualClock();
    const bucket = new TokenBucket({ perMinute: 60, burst: 3, clock });
    const times: number[] = [];
    for (let i = 0; i < 6; i++) {
      await bucket.take();
      times.push(clock.now());
    }
    assert.deepEqual(times, [0, 0, 0, 1000, 2000, 3000]);
    assert.equal(bucket.waitedMs, 3000);
  });

  test("never lets more than burst + rate through in any 60 s window", async () => {
    const clock = virtualClock();
    const bucket = new TokenBucket({ perMinute: 90, burst: defaultBurst(90), clock });
    const times: number[] = [];
    for (let i = 0; i < 300; i++) {
      await bucket.take();
      times.push(clock.now());
    }
    for (let i = 0; i < times.length; i++) {
      const inWindow = times.filter((t) => t >= times[i]! && t < times[i]! + 60_000).length;
      assert.ok(inWindow <= 99, `${inWindow} requests in the minute from ${times[i]} ms`);
    }
  });

  test("refills while idle, up to the burst only", async () => {
    const clock = virtualClock();
    const bucket = new TokenBucket({ perMinute: 600, burst: 2, clock });
    await bucket.take();
    await bucket.take();
    await clock.sleep(60_000);
    await bucket.take();
    await bucket.take();
    const before = clock.now();
    await bucket.take();
    assert.equal(clock.now() - before, 100, "the third waits: the bucket held 2, not 600");
  });

  test("pauseFor (Retry-After) holds every taker until it ends, then restarts empty", async () => {
    const clock = virtualClock();
    const bucket = new TokenBucket({ perMinute: 60, burst: 5, clock });
    await bucket.take();
    bucket.pauseFor(2500);
    await bucket.take();
    assert.equal(clock.now(), 3500, "2.5 s pause, then one token's refill time");
  });

  test("hands tokens out in call order to concurrent takers", async () => {
    const clock = virtualClock();
    const bucket = new TokenBucket({ perMinute: 60, burst: 1, clock });
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3].map((i) => bucket.take().then(() => order.push(i))));
    assert.deepEqual(order, [0, 1, 2, 3]);
    assert.equal(clock.now(), 3000);
  });

  test("refuses a rate or burst that makes no sense", () => {
    assert.throws(() => new TokenBucket({ perMinute: 0, burst: 1 }), RangeError);
    assert.throws(() => new TokenBucket({ perMinute: 10, burst: 0 }), RangeError);
    assert.throws(() => new TokenBucket({ perMinute: Number.NaN, burst: 1 }), RangeError);
  });

  test("the default burst keeps the default 90/min under the sandbox's 100 in any minute", () => {
    assert.equal(defaultBurst(90), 9);
    assert.ok(defaultBurst(90) + 90 < 100);
    assert.equal(defaultBurst(5), 1);
  });
});

describe("parseRetryAfter", () => {
  test("reads seconds and HTTP dates", () => {
    assert.equal(parseRetryAfter("2"), 2000);
    assert.equal(parseRetryAfter(" 0 "), 0);
    assert.equal(
      parseRetryAfter("Wed, 21 Oct 2015 07:28:05 GMT", Date.parse("Wed, 21 Oct 2015 07:28:00 GMT")),
      5000,
    );
    assert.equal(parseRetryAfter("soon"), undefined);
    assert.equal(parseRetryAfter(undefined), undefined);
  });
});

describe("HttpClient and 429", () => {
  let server: Server;
  let baseUrl: string;
  const hits: string[] = [];
  /** Requests answered 429 before the next 200. */
  let refuseNext = 0;
  let retryAfter: string | undefined = "0";

  before(async () => {
    server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      req.resume();
      if (refuseNext > 0) {
        refuseNext--;
        const headers: Record<string, string> = { "content-type": "application/problem+json" };
        if (retryAfter !== undefined) headers["retry-after"] = retryAfter;
        res.writeHead(429, headers).end('{"code":"rate_limited"}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end('{"success":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/base`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function client(): HttpClient {
    return new HttpClient({ baseUrl, bucket: new TokenBucket({ perMinute: 6000, burst: 100 }) });
  }

  test("a GET refused with 429 is retried after Retry-After, and every attempt is counted", async () => {
    hits.length = 0;
    refuseNext = 2;
    retryAfter = "0";
    const c = client();
    const ex = await c.send("T", { method: "GET", path: "/x" });
    await c.close();
    assert.equal(ex.response?.status, 200);
    assert.equal(ex.attempts, 3);
    assert.equal(c.spent, 3);
    assert.deepEqual(hits, ["GET /base/x", "GET /base/x", "GET /base/x"], "the base URL's path is kept");
  });

  test("a POST refused with 429 is never retried", async () => {
    hits.length = 0;
    refuseNext = 1;
    retryAfter = "0";
    const c = client();
    const ex = await c.send("T", { method: "POST", path: "/x", body: "{}" });
    await c.close();
    assert.equal(ex.response?.status, 429);
    assert.equal(ex.attempts, 1);
    assert.equal(hits.length, 1);
  });

  test("a GET refused with 429 without Retry-After waits out the minute of the limit, then retries", async () => {
    hits.length = 0;
    refuseNext = 1;
    retryAfter = undefined;
    const clock = virtualClock();
    const c = new HttpClient({ baseUrl, bucket: new TokenBucket({ perMinute: 6000, burst: 100, clock }) });
    const ex = await c.send("T", { method: "GET", path: "/x" });
    await c.close();
    assert.equal(ex.response?.status, 200);
    assert.equal(ex.attempts, 2);
    assert.ok(clock.sleeps.reduce((a, b) => a + b, 0) >= 60_000, `waited ${clock.sleeps.join(", ")} ms`);
  });

  test("after too many retries a 429 is returned as is", async () => {
    const c = client();
    refuseNext = 5;
    retryAfter = "0";
    const again = await c.send("T", { method: "GET", path: "/x" });
    await c.close();
    assert.equal(again.response?.status, 429);
    assert.equal(again.attempts, 3, "the first try and two retries");
    refuseNext = 0;
  });

  test("an unreachable target is recorded as a transport error, not thrown", async () => {
    const c = new HttpClient({
      baseUrl: "http://127.0.0.1:1",
      bucket: new TokenBucket({ perMinute: 60, burst: 1 }),
      timeoutMs: 2000,
    });
    const ex = await c.send("T", { method: "GET", path: "/" });
    await c.close();
    assert.equal(ex.response, undefined);
    assert.match(ex.error ?? "", /ECONNREFUSED|connect/i);
  });
});
