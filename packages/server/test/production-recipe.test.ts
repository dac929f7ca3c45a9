/**
 * The README's production recipe ("Running it in production"), run as an operator runs it:
 * `db migrate`, `db import-fixtures --env production` of an operator's data (fresh credentials,
 * never the published demo ones), then two `serve --env production` instances on one PostgreSQL
 * and one Redis behind a load balancer that polls `/readyz` (balancer.ts).
 * The "done when" of issue 27, one `describe` per item, on the instances `recipe` started (and
 * restarted): /readyz and a rolling restart that loses no request, the published credential
 * refused, /metrics after traffic, a trace continued from `traceparent` exported over OTLP, this
 * release on the next additive schema, a re-import that keeps an operator's change. Needs
 * PostgreSQL and Redis (fails under CI=true without them, skips loudly otherwise); about 25 s.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";
import { DEMO, gate, type PrivateFixtures, privateFixtures } from "@partner-yield/node-adapter/testing";
import { knownMigrations, migrate, parseMigration } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { REDIS_URL, redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import { type Balancer, getThrough, keepAliveLoad, startBalancer } from "./balancer.js";
import { runCli, type ServerProcess, startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({
  PostgreSQL: await postgresReachable(),
  Redis: await redisReachable(),
});
// At the top level: testDatabase and testRedis drop what they made after the file's tests.
const db = available ? await testDatabase("recipe", { migrated: false }) : undefined;
const redisKeys = available ? await testRedis("recipe") : undefined;

/** What the recipe set up, for every block below. */
interface Recipe {
  /** The operator's data file (fresh credentials: `productionApiKey`, `signingSecret`). */
  readonly data: PrivateFixtures;
  /** The two instances; the first is replaced by the rolling restart. */
  readonly instances: ServerProcess[];
  readonly balancer: Balancer;
  /** `serve`'s arguments, as the README gives them (the URLs in flags here, not the environment). */
  readonly serveArgs: readonly string[];
}

describe("the production recipe (README, Running it in production)", () => {
  let recipe: Recipe;

  before(async () => {
    if (db === undefined || redisKeys === undefined) return;
    const data = privateFixtures();
    const env = { DATABASE_URL: db.url };
    const migrated = await runCli(["db", "migrate"], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const imported = await runCli(["db", "import-fixtures", "--env", "production", data.dir], env);
    assert.equal(imported.code, 0, imported.stderr);
    const serveArgs = [
      "--env",
      "production",
      "--database-url",
      db.url,
      "--redis-url",
      REDIS_URL,
      "--redis-key-prefix",
      redisKeys.prefix,
      // The load below is far past a production quota: the limiter still runs.
      "--rate-limit-quota",
      "1000000",
      // Long enough for the balancer (polling every 50 ms) to see /readyz turn 503.
      "--drain-delay",
      "1500",
      // /metrics on a port of its own (0: any free one; each instance prints its URL).
      "--metrics-port",
      "0",
    ];
    const instances = await Promise.all([startServerProcess(serveArgs), startServerProcess(serveArgs)]);
    const balancer = await startBalancer(instances.map(backendOf), 50);
    recipe = { data, instances, balancer, serveArgs };
  });
  after(async () => {
    if (recipe === undefined) return;
    await recipe.balancer.close();
    await Promise.all(recipe.instances.map((s) => s.stop("SIGTERM")));
    recipe.data.remove();
  });

  // ── Deploys (graceful drain, /readyz) ─────────────────────────────────────────────────────────
  describe("deploys: /readyz and a rolling restart", () => {
    test("both instances are ready, /readyz reporting every store", async () => {
      for (const instance of recipe.instances) {
        const res = await fetch(`${instance.url}/readyz`);
        const body = (await res.json()) as { status: string; stores: Record<string, string> };
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(body.status, "ready");
        assert.equal(body.stores["events"], "ok");
        assert.equal(body.stores["rate_limits"], "ok");
      }
    });

    test("a rolling restart of one of two instances under keep-alive load loses no request; /readyz drains first", async () => {
      const { balancer, instances, data } = recipe;
      let restarted!: () => void;
      const done = new Promise<void>((resolve) => {
        restarted = resolve;
      });
      const load = keepAliveLoad({
        url: balancer.url,
        workers: 8,
        maxPerWorker: 5000,
        until: done,
        send: (url, agent) =>
          getThrough(`${url}/api/partner/products`, agent, { "x-api-key": data.productionApiKey }),
      });
      try {
        const old = instances[0]!;
        await balancer.waitForRouted([backendOf(old), backendOf(instances[1]!)]);

        const stopped = old.stop("SIGTERM");
        // At once not ready, with Retry-After, while it still serves.
        let drain: Response | undefined;
        for (let i = 0; i < 500 && drain === undefined; i++) {
          const res = await fetch(`${old.url}/readyz`);
          if (res.status === 503) drain = res;
          else await res.arrayBuffer();
          if (drain === undefined) await sleep(10);
        }
        assert.ok(drain !== undefined, "/readyz never turned 503");
        assert.equal(drain.headers.get("retry-after"), "1");
        assert.deepEqual(await drain.json(), { status: "draining" });
        assert.equal(await stopped, 0, old.output().stderr);

        const successor = await startServerProcess(recipe.serveArgs);
        instances[0] = successor;
        balancer.setBackends(instances.map(backendOf));
      } finally {
        restarted();
      }
      const result = await load;
      assert.deepEqual(result.errors, [], "no request failed and none was retried");
      assert.deepEqual([...result.statuses.keys()], [200], "every request answered 200");
      assert.ok(result.total > 0);
    });
  });

  // ── Published credentials (data-ops / security: add assertions here) ────────────────────────
  describe("published credentials", () => {
    test("the published demo production key is refused by the recipe's instances", async () => {
      const res = await fetch(`${recipe.instances[1]!.url}/api/partner/products`, {
        headers: { "x-api-key": DEMO.productionApiKey },
      });
      await res.text();
      assert.equal(res.status, 401);
    });
  });

  // ── Metrics (metrics engineer: /metrics shows the issue's series after traffic) ─────────────
  describe("metrics", () => {
    test("/metrics shows the requests, the refusals, the events, the stores, the pool, the cache and the prices after traffic", async () => {
      // The second instance has served since the start (the first was replaced by the restart).
      const instance = recipe.instances[1]!;
      const metricsUrl = /metrics (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(instance.banner)?.[1];
      assert.ok(metricsUrl, `no metrics URL in the banner:\n${instance.banner}`);
      const api = `${instance.url}/api/partner`;
      const key = { "x-api-key": recipe.data.productionApiKey };
      for (const path of ["/products", "/products/usdc-base-prime", "/products/no-such-product"]) {
        const res = await fetch(`${api}${path}`, { headers: key });
        await res.arrayBuffer();
      }
      const refused = await fetch(`${api}/products`, { headers: { "x-api-key": DEMO.productionApiKey } });
      await refused.arrayBuffer();
      assert.equal(refused.status, 401);
      const scrape = await fetch(metricsUrl);
      assert.equal(scrape.status, 200);
      const text = await scrape.text();
      const has = (pattern: RegExp, what: string) =>
        assert.match(
          text,
          pattern,
          `${what}:\n${text
            .split("\n")
            .filter((line) => line.startsWith("partner_yield_"))
            .join("\n")}`,
        );
      has(
        /^partner_yield_http_requests_total\{[^\n]*route="GET \/products\/\{slug\}"[^\n]*status="200"[^\n]*\} [1-9]/m,
        "requests by route and status",
      );
      has(
        /^partner_yield_http_requests_total\{[^\n]*status="404"[^\n]*code="product_not_found"[^\n]*\} [1-9]/m,
        "requests by error code",
      );
      has(
        /^partner_yield_http_request_duration_seconds_bucket\{[^\n]*route="GET \/products"/m,
        "latency by route",
      );
      has(/^partner_yield_http_auth_failures_total\{[^\n]*\} [1-9]/m, "failed authentications");
      has(/^partner_yield_store_up\{store="events"\} 1$/m, "the event store up");
      has(/^partner_yield_store_up\{store="rate_limits"\} 1$/m, "Redis up");
      has(/^partner_yield_pg_pool_connections\{/m, "the pool");
      has(/^partner_yield_read_cache_trusted 1$/m, "the read cache in use");
      has(
        /^partner_yield_price_age_seconds\{partner="[^"]+",product="usdc-base-prime"\} \d/m,
        "price age per product",
      );
      has(/^process_cpu_seconds_total /m, "process metrics");
    });
  });

  // ── Traces (traces engineer: a trace with a traceparent parent reaches an in-memory exporter) ─
  describe("traces", () => {
    test("a request's trace, continued from its traceparent, reaches the OTLP endpoint", async () => {
      const received: string[] = [];
      const receiver = createServer((req, res) => {
        let body = "";
        req.setEncoding("utf8");
        req.on("data", (chunk: string) => (body += chunk));
        req.on("end", () => {
          received.push(body);
          res.writeHead(200, { "content-type": "application/json" }).end("{}");
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
      const port = (receiver.address() as AddressInfo).port;
      // The child's environment is this process's (server-process.ts): set for its start only.
      const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: "50" };
      const saved = Object.keys(otel).map((name) => [name, process.env[name]] as const);
      Object.assign(process.env, otel);
      let traced: ServerProcess | undefined;
      try {
        traced = await startServerProcess(recipe.serveArgs);
      } finally {
        for (const [name, value] of saved) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
      try {
        const traceId = randomBytes(16).toString("hex");
        const parentId = randomBytes(8).toString("hex");
        const res = await fetch(`${traced.url}/api/partner/products/usdc-base-prime`, {
          headers: { "x-api-key": recipe.data.productionApiKey, traceparent: `00-${traceId}-${parentId}-01` },
        });
        assert.equal(res.status, 200);
        await res.arrayBuffer();
        type Span = { traceId: string; parentSpanId?: string; name: string };
        // The spans of every export so far (a store call's child span may go out before its request's).
        const spans = () =>
          received.flatMap((body) =>
            (
              JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }
            ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((scope) => scope.spans)),
          );
        const isServer = (span: Span) => span.traceId === traceId && span.parentSpanId === parentId;
        const deadline = Date.now() + 15_000;
        while (!spans().some(isServer) && Date.now() < deadline) await sleep(50);
        const server = spans().find(isServer);
        assert.ok(server, `no span of trace ${traceId} with parent ${parentId}: ${JSON.stringify(spans())}`);
        assert.match(server.name, /GET \/products\/\{slug\}/);
        assert.ok(
          spans().some((span) => span.traceId === traceId && span.name === "keys.findByHash"),
          "the key lookup is a child span of the trace",
        );
        assert.ok(
          !received.some((body) => body.includes(recipe.data.productionApiKey)),
          "the key is not exported",
        );
      } finally {
        await traced.stop("SIGTERM");
        await new Promise((resolve) => receiver.close(resolve));
      }
    });
  });

  // ── Migrations (the previous release starts on the next additive schema) ────────────────────
  describe("migrations: rollback", () => {
    test("this release starts and serves on the next release's additive schema", async () => {
      // The next release's schema: one more migration, additive (it runs releases N and N + 1).
      const n = knownMigrations().length;
      const next = [
        ...knownMigrations(),
        parseMigration(
          `${String(n + 1).padStart(4, "0")}_product_notes.sql`,
          `-- compatible_from: ${n}\nalter table products add column notes text;\n`,
        ),
      ];
      await migrate(db!.pool, { migrations: next });
      const status = await runCli(["db", "status"], { DATABASE_URL: db!.url });
      assert.equal(status.code, 0, status.stderr);
      assert.match(
        status.stdout,
        new RegExp(`schema version\\s+${n + 1} \\(newer than this partner-yield's ${n}, which runs on it\\)`),
      );
      const old = await startServerProcess(recipe.serveArgs);
      try {
        const res = await fetch(`${old.url}/api/partner/products/usdc-base-prime`, {
          headers: { "x-api-key": recipe.data.productionApiKey },
        });
        assert.equal(res.status, 200, await res.text());
      } finally {
        await old.stop("SIGTERM");
      }
    });
  });

  // ── Data operations (a re-import keeps an operator's change; secrets encrypted at rest) ────
  describe("data operations", () => {
    // ADD HERE: e.g. runCli(["db", "import-fixtures", "--env", "production", recipe.data.dir], …).
    test("a re-import keeps an operator's change; the signing secrets are stored encrypted", async () => {
      const { balancer, data } = recipe;
      const product = `${DEMO.partnerId}/usdc-base-prime`;
      const where = "where partner_id = $1 and slug = 'usdc-base-prime'";
      await db!.pool.query(`update products set status = 'paused' ${where}`, [DEMO.partnerId]);
      const again = await runCli(["db", "import-fixtures", "--env", "production", data.dir], {
        DATABASE_URL: db!.url,
      });
      assert.equal(again.code, 0, again.stderr);
      assert.match(
        again.stdout,
        new RegExp(`kept as the database has them[^\\n]*\\n\\s+products ${product}\\n`),
      );
      const stored = await db!.pool.query<{ status: string }>(`select status from products ${where}`, [
        DEMO.partnerId,
      ]);
      assert.equal(stored.rows[0]?.status, "paused", "the operator's pause survives the re-import");
      // The instances serve it paused (each read cache drops the row on the UPDATE's notification).
      let served: string | undefined;
      for (let i = 0; i < 50 && served !== "paused"; i++) {
        const res = await fetch(`${balancer.url}/api/partner/products/usdc-base-prime`, {
          headers: { "x-api-key": data.productionApiKey },
        });
        served = ((await res.json()) as { data?: { status?: string } }).data?.status;
        if (served !== "paused") await sleep(100);
      }
      assert.equal(served, "paused");
      const plain = await db!.pool.query("select id from signing_secrets where secret is not null");
      assert.equal(plain.rowCount, 0, "no signing secret in plain text");
    });
  });
});

function backendOf(s: ServerProcess) {
  const url = new URL(s.url);
  return { host: url.hostname, port: Number(url.port) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
