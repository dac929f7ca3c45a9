/**
 * The README's production recipe ("Running it in production"), run as an operator runs it:
 * `db migrate`, `db import-fixtures --env production` of an operator's data (fresh credentials,
 * never the published demo ones), then two `serve --env production` instances on one PostgreSQL
 * and one Redis behind a load balancer that polls `/readyz` (packages/node-adapter/test/balancer.ts).
 * The "done when" of issue 27, one `describe` per item: each area adds its assertions to its own
 * block, on the instances `recipe` started (and restarted). Needs PostgreSQL and Redis (fails under
 * CI=true without them, skips loudly otherwise); about 20 s.
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import {
  type Balancer,
  getThrough,
  keepAliveLoad,
  startBalancer,
} from "../packages/node-adapter/test/balancer.js";
import {
  runCli,
  type ServerProcess,
  startServerProcess,
} from "../packages/node-adapter/test/server-process.js";
import { DEMO, type PrivateFixtures, privateFixtures } from "../packages/node-adapter/test/support.js";
import { gate, postgresReachable, testDatabase } from "../packages/store-postgres/test/database.js";
import { REDIS_URL, redisReachable, testRedis } from "../packages/store-redis/test/redis.js";

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
        const routedTo = (s: ServerProcess) => balancer.routed.get(backendName(s)) ?? 0;
        while (routedTo(old) === 0 || routedTo(instances[1]!) === 0) await sleep(10);

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

  // ── Metrics (metrics engineer: /metrics shows the series after traffic) ─────────────
  describe("metrics", () => {
    // ADD HERE: start the instances with --metrics-port (recipe.serveArgs) and assert the series.
  });

  // ── Traces (traces engineer: a trace with a traceparent parent reaches an in-memory exporter) ─
  describe("traces", () => {
    // ADD HERE.
  });

  // ── Migrations (the previous release starts on the next additive schema) ────────────────────
  describe("migrations: rollback", () => {
    // ADD HERE.
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

function backendName(s: ServerProcess): string {
  const b = backendOf(s);
  return `${b.host}:${b.port}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
