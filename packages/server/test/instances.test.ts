/**
 * Two `partner-yield serve` processes sharing one PostgreSQL and one Redis, as behind a load
 * balancer: the same idempotency key sent to both is one event, and the quota holds summed over
 * both (the run is shorter than the 60 s window, so every allowed request falls in one window).
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { signBody } from "@partner-yield/core";
import {
  DEMO,
  eventBody,
  eventHeaders,
  gate,
  INBOUND,
  loadSandbox,
} from "@partner-yield/node-adapter/testing";
import { dataSetOf, importData } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { REDIS_URL, redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import { type ServerProcess, startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({
  PostgreSQL: await postgresReachable(),
  Redis: await redisReachable(),
});
const db = available ? await testDatabase("instances") : undefined;
const redisKeys = available ? await testRedis("instances") : undefined;
const QUOTA = 100;

describe("two instances on one PostgreSQL and one Redis", () => {
  let servers: ServerProcess[] = [];

  before(async () => {
    if (db === undefined || redisKeys === undefined) return;
    await importData(db.pool, dataSetOf(loadSandbox()));
    const args = [
      "--database-url",
      db.url,
      "--redis-url",
      REDIS_URL,
      "--redis-key-prefix",
      redisKeys.prefix,
      "--rate-limit-quota",
      String(QUOTA),
    ];
    servers = await Promise.all([startServerProcess(args), startServerProcess(args)]);
    for (const server of servers) assert.match(server.banner, /PostgreSQL .*\n.*rate limits: Redis/);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop("SIGTERM")));
  });

  test("the same idempotency key sent to both instances at once yields one event", async () => {
    const key = `instances-${Date.now()}`;
    const body = eventBody(key);
    const answers = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await fetch(servers[i % 2]!.url + INBOUND, {
          method: "POST",
          headers: eventHeaders(body, key),
          body,
        });
        return { status: res.status, body: JSON.parse(await res.text()) as Record<string, unknown> };
      }),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(12).fill(200),
    );
    assert.equal(new Set(answers.map((a) => a.body["event_id"])).size, 1, JSON.stringify(answers));
    assert.equal(answers.filter((a) => a.body["duplicate"] === false).length, 1);
    const rows = await db!.pool.query("select id from events where idempotency_key = $1", [key]);
    assert.equal(rows.rowCount, 1);
  });

  test(`the quota (${QUOTA} a minute) holds summed over both instances, each partner's on its own`, async () => {
    // The other partner: the event test above spent none of its quota. Northwind's requests go
    // among them, so both partners' hits meet in the instances' turns and may share a Redis script
    // run (the keys of a turn go out as one): each partner still gets its own count.
    const key = DEMO.otherPartnerSandboxApiKey;
    const NORTHWIND = 10;
    const get = async (server: ServerProcess, apiKey: string) => {
      const res = await fetch(`${server.url}/api/partner/products`, { headers: { "x-api-key": apiKey } });
      await res.arrayBuffer();
      return {
        status: res.status,
        ratelimit: res.headers.get("ratelimit"),
        retry: res.headers.get("retry-after"),
      };
    };
    const [answers, northwind] = await Promise.all([
      Promise.all(Array.from({ length: 3 * QUOTA }, (_, i) => get(servers[i % 2]!, key))),
      Promise.all(Array.from({ length: NORTHWIND }, (_, i) => get(servers[i % 2]!, DEMO.sandboxApiKey))),
    ]);
    assert.deepEqual(
      northwind.map((a) => a.status),
      Array(NORTHWIND).fill(200),
      "Northwind's requests are within its own quota",
    );
    const northwindLeft = northwind
      .map((a) => Number(/;r=(\d+);/.exec(a.ratelimit ?? "")?.[1]))
      .sort((a, b) => a - b);
    // After the event test's 12: one shared count across both instances, QUOTA-13 down to QUOTA-22.
    assert.deepEqual(
      northwindLeft,
      Array.from({ length: NORTHWIND }, (_, i) => QUOTA - 12 - NORTHWIND + i),
    );
    const allowed = answers.filter((a) => a.status === 200);
    assert.equal(allowed.length, QUOTA, answers.map((a) => a.status).join(","));
    assert.ok(answers.every((a) => a.status === 200 || a.status === 429));
    // One shared count: each allowed request saw a different remaining count, QUOTA-1 down to 0.
    const remaining = allowed
      .map((a) => Number(/;r=(\d+);/.exec(a.ratelimit ?? "")?.[1]))
      .sort((a, b) => a - b);
    assert.deepEqual(
      remaining,
      Array.from({ length: QUOTA }, (_, i) => i),
    );
    for (const refused of answers.filter((a) => a.status === 429))
      assert.ok(Number(refused.retry) >= 1 && Number(refused.retry) <= 60, `Retry-After ${refused.retry}`);
    // Still refused on both, whichever instance is asked.
    for (const server of servers) {
      const res = await fetch(`${server.url}/api/partner/products`, { headers: { "x-api-key": key } });
      await res.arrayBuffer();
      assert.equal(res.status, 429);
    }
  });

  test("a signing secret revoked in the database stops verifying on both instances at the next request (the store checks it)", async () => {
    const body = eventBody("rotation");
    const send = async (server: ServerProcess, secret: string) => {
      const headers = { ...eventHeaders(body, `rot-${Date.now()}-${Math.random()}`) };
      headers["x-partner-signature"] = signBody(secret, new TextEncoder().encode(body));
      headers["x-api-key"] = DEMO.sandboxApiKey;
      const res = await fetch(server.url + INBOUND, { method: "POST", headers, body });
      await res.arrayBuffer();
      return res.status;
    };
    // Northwind's quota: 22 requests above, 5 here, at most 64 in the next test.
    assert.equal(await send(servers[0]!, DEMO.rotatedSigningSecret), 200);
    await db!.pool.query(
      "update signing_secrets set status = 'revoked', revoked_at = now() where secret = $1",
      [DEMO.rotatedSigningSecret],
    );
    for (const server of servers) {
      assert.equal(await send(server, DEMO.rotatedSigningSecret), 401);
      assert.equal(await send(server, DEMO.signingSecret), 200);
    }
  });

  test("one SQL UPDATE of a product's status and metrics is served by both instances", async () => {
    const quote = async (server: ServerProcess) => {
      const res = await fetch(`${server.url}/api/partner/products/usdc-base-prime/yield-calc?amount=1000`, {
        headers: { "x-api-key": DEMO.sandboxApiKey },
      });
      return {
        status: res.status,
        body: JSON.parse(await res.text()) as { data?: { net_apy_for_user: string } },
      };
    };
    /**
     * The instance's answer once it serves the change: each read cache applies PostgreSQL's
     * notification within moments (CONTRACT, "Durable, shared stores"); polled, not timed, and
     * within the quota (15 tries, 100 ms apart).
     */
    const served = async (server: ServerProcess, done: (a: Awaited<ReturnType<typeof quote>>) => boolean) => {
      let answer = await quote(server);
      for (let i = 0; i < 15 && !done(answer); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await quote(server);
      }
      return answer;
    };
    await db!.pool.query(
      "update products set underlying_apy = 0.1, metrics_as_of_date = '2026-11-21' where slug = 'usdc-base-prime'",
    );
    for (const server of servers) {
      const answer = await served(
        server,
        (a) => a.status !== 200 || a.body.data?.net_apy_for_user === "0.0985",
      );
      assert.equal(answer.status, 200);
      // 10 % less 1.5 % of fees (50 + 100 bps).
      assert.equal(answer.body.data?.net_apy_for_user, "0.0985");
    }
    await db!.pool.query("update products set status = 'paused' where slug = 'usdc-base-prime'");
    for (const server of servers) assert.equal((await served(server, (a) => a.status !== 200)).status, 409);
  });
});
