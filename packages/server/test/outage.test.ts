/**
 * Outages of the stores, mid-run, through a TCP proxy the test cuts (the shared PostgreSQL and
 * Redis keep running): every request is answered 503 service_unavailable with Retry-After — never
 * a 500, never an acknowledgement of an event that was not stored — and the server recovers by
 * itself, without a restart, when the store is back.
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { RunningServer } from "@partner-yield/node-adapter";
import {
  eventBody,
  eventHeaders,
  gate,
  INBOUND,
  KEY,
  loadSandbox,
  startTcpProxy,
  startTestServer,
  type TcpProxy,
} from "@partner-yield/node-adapter/testing";
import {
  createPostgresStores,
  dataSetOf,
  importData,
  type PostgresStores,
} from "@partner-yield/store-postgres";
import { databaseUrl, postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { connectRedis, RedisRateLimiter } from "@partner-yield/store-redis";
import { REDIS_URL, redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import { FallbackRateLimiter } from "../src/fallback-limiter.js";

const { describe, test, available } = gate({
  PostgreSQL: await postgresReachable(),
  Redis: await redisReachable(),
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: string;
}

// Created at the top level: testDatabase and testRedis drop what they made after the file's tests.
const db = available ? await testDatabase("outage") : undefined;
const redisKeys = available ? await testRedis("outage") : undefined;

describe("outages of PostgreSQL and Redis", () => {
  let pgProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let stores: PostgresStores;
  let server: RunningServer;

  before(async () => {
    if (db === undefined || redisKeys === undefined) return;
    await importData(db.pool, dataSetOf(loadSandbox()));
    const admin = new URL(db.url);
    pgProxy = await startTcpProxy(admin.hostname, Number(admin.port || 5432));
    const redisTarget = new URL(REDIS_URL);
    redisProxy = await startTcpProxy(redisTarget.hostname, Number(redisTarget.port || 6379));
    const { prefix } = redisKeys;
    // Short timeouts, so that the black hole is noticed quickly.
    stores = createPostgresStores({
      connectionString: databaseUrl(db.name, { host: "127.0.0.1", port: pgProxy.port }),
      connectionTimeoutMs: 1000,
      statementTimeoutMs: 1000,
    });
    const redis = await connectRedis({ url: `redis://127.0.0.1:${redisProxy.port}`, commandTimeoutMs: 500 });
    // As `serve` composes it: while Redis is down each instance counts the quotas itself.
    const limiter = new FallbackRateLimiter({
      primary: new RedisRateLimiter({ redis, ownsClient: true, keyPrefix: prefix }),
      probeMs: 100,
    });
    const { events, keys, partners, products, positions, prices } = stores;
    server = await startTestServer({
      events,
      keys,
      partners,
      products,
      positions,
      prices,
      rateLimiter: limiter,
      readinessChecks: { events: stores.ping, rate_limits: () => limiter.ping() },
    });
  });
  after(async () => {
    if (!available) return;
    await server.close();
    await pgProxy.close();
    await redisProxy.close();
  });

  const post = async (key: string): Promise<Answer> => {
    const body = eventBody(key);
    const res = await fetch(server.url + INBOUND, { method: "POST", headers: eventHeaders(body, key), body });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() };
  };
  const products = async (): Promise<Answer> => {
    const res = await fetch(`${server.url}/api/partner/products`, { headers: { "x-api-key": KEY } });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() };
  };
  const readyz = async () => {
    const res = await fetch(`${server.url}/readyz`);
    return {
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
      body: JSON.parse(await res.text()) as { status: string; stores: Record<string, string> },
    };
  };
  /** Retries `request` until it answers 200 (at most 20 s): recovery without a restart. */
  const recovered = async (request: () => Promise<Answer>): Promise<Answer> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const answer = await request();
      assert.ok(answer.status === 200 || answer.status === 503, `${answer.status}: ${answer.body}`);
      if (answer.status === 200 || Date.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const expect503 = (answer: Answer, what: string) => {
    assert.equal(answer.status, 503, `${what}: ${answer.body}`);
    assert.match(answer.body, /"code":"service_unavailable"/);
    assert.ok(Number(answer.retryAfter) >= 1, `${what}: Retry-After ${answer.retryAfter}`);
  };

  for (const mode of ["refuse", "blackhole"] as const) {
    test(`PostgreSQL ${mode === "refuse" ? "down (connections refused)" : "unreachable (packets dropped)"}: 503 with Retry-After, then recovery without a restart`, async () => {
      const run = `outage-pg-${mode}-${Date.now()}`;
      assert.equal((await post(`${run}-before`)).status, 200);
      pgProxy.cut(mode);
      expect503(await post(`${run}-during`), "an event");
      expect503(await products(), "the product list");
      // A shared store down is reported but does not take the instance out of the balancer.
      const ready = await readyz();
      assert.equal(ready.status, 200);
      assert.equal(ready.body.status, "degraded");
      assert.equal(ready.body.stores["events"], "unavailable");
      assert.equal(ready.body.stores["rate_limits"], "ok");
      pgProxy.restore();
      const again = await recovered(() => post(`${run}-during`));
      assert.equal(again.status, 200, again.body);
      // It was never stored while the database was away: the retry creates it.
      assert.match(again.body, /"duplicate":false/);
      assert.equal((await products()).status, 200);
      assert.equal((await readyz()).body.status, "ready");
    });
  }

  test("Redis down: requests and events still served (each instance counts the quota itself), /readyz degraded, Redis used again when back", async () => {
    redisProxy.cut("refuse");
    assert.equal((await products()).status, 200);
    assert.equal((await post(`outage-redis-${Date.now()}`)).status, 200);
    const ready = await readyz();
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, "degraded");
    assert.equal(ready.body.stores["rate_limits"], "unavailable");
    redisProxy.restore();
    const deadline = Date.now() + 20_000;
    while ((await readyz()).body.status !== "ready" && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await readyz()).body.stores["rate_limits"], "ok");
    assert.equal((await products()).status, 200);
  });

  test("a stream of events cut mid-way: every 200 is stored exactly once, the rest are 503, never 500", async () => {
    const run = `outage-stream-${Date.now()}`;
    const keys = Array.from({ length: 60 }, (_, i) => `${run}-${i}`);
    const answers = new Map<string, Answer>();
    let sent = 0;
    const worker = async () => {
      while (sent < keys.length) {
        const key = keys[sent++]!;
        if (sent === 30) pgProxy.cut("refuse");
        answers.set(key, await post(key));
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    pgProxy.restore();
    const statuses = [...answers.values()].map((a) => a.status);
    assert.ok(
      statuses.every((s) => s === 200 || s === 503),
      statuses.join(","),
    );
    assert.ok(statuses.includes(503), "the cut was seen");
    await recovered(products);
    for (const [key, answer] of answers) {
      const stored = await stores.events.find("northwind", "sandbox", key);
      if (answer.status === 200) {
        const id = (JSON.parse(answer.body) as { event_id: number }).event_id;
        assert.equal(stored?.id, id, `${key} was acknowledged as ${id}`);
      }
    }
  });
});
