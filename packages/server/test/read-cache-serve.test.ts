/**
 * `partner-yield serve --database-url` with its read cache (on by default), two processes on one
 * database: a key revoked with the CLI, a product paused and its metrics changed with SQL, are
 * honoured by both; with their listening connections killed on the server, /readyz stays 200 and a
 * key revoked meanwhile is refused; `--read-cache off` says so in the banner. Functional checks: a
 * change is polled for, never timed (bench/propagation.ts measures the time).
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { DEMO, gate, loadSandbox } from "@partner-yield/node-adapter/testing";
import { dataSetOf, importData, PostgresPartnerAdmin } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { runCli, type ServerProcess, startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("readcache_serve") : undefined;
const SLUG = "usdc-base-prime";

/** Polls `check` every 25 ms until it holds (at most 10 s). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within 10 s`);
    await delay(25);
  }
}

async function get(
  server: ServerProcess,
  path: string,
  key: string,
): Promise<{ status: number; body: { data?: Record<string, unknown> } }> {
  const res = await fetch(`${server.url}/api/partner${path}`, { headers: { "x-api-key": key } });
  return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown> } };
}

describe("two serve processes with their read caches on one database", () => {
  let servers: ServerProcess[] = [];

  before(async () => {
    if (db === undefined) return;
    await importData(db.pool, dataSetOf(loadSandbox()));
    servers = await Promise.all([
      startServerProcess(["--database-url", db.url]),
      startServerProcess(["--database-url", db.url]),
    ]);
    for (const server of servers) assert.match(server.banner, /read cache: on in this process/);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop("SIGTERM")));
  });

  /** A new sandbox key of the demo partner. */
  const newKey = async (): Promise<{ id: string; apiKey: string }> => {
    const issued = await new PostgresPartnerAdmin(db!.pool).createKey({
      partnerId: DEMO.partnerId,
      environment: "sandbox",
    });
    assert.ok(issued.ok);
    return { id: issued.value.summary.id, apiKey: issued.value.apiKey };
  };
  const everyServer = (check: (server: ServerProcess) => Promise<boolean>) => async () =>
    (await Promise.all(servers.map(check))).every(Boolean);

  test("a key revoked with the CLI is refused by both", async () => {
    const key = await newKey();
    for (let i = 0; i < 2; i++)
      for (const server of servers) assert.equal((await get(server, "/products", key.apiKey)).status, 200);
    const revoked = await runCli(["keys", "revoke", key.id], { DATABASE_URL: db!.url });
    assert.equal(revoked.code, 0, revoked.stderr);
    await eventually(
      "401 from both",
      everyServer(async (server) => (await get(server, "/products", key.apiKey)).status === 401),
    );
  });

  test("a product paused, and its metrics changed, with SQL are served so by both", async () => {
    const product = (server: ServerProcess) => get(server, `/products/${SLUG}`, DEMO.sandboxApiKey);
    for (const server of servers) assert.equal((await product(server)).body.data?.["status"], "active");
    await db!.pool.query("update products set status = 'paused' where slug = $1", [SLUG]);
    await eventually(
      "paused on both",
      everyServer(async (server) => (await product(server)).body.data?.["status"] === "paused"),
    );
    const before = (await product(servers[0]!)).body.data;
    await db!.pool.query(
      "update products set status = 'active', metrics_as_of_date = metrics_as_of_date + 1 where slug = $1",
      [SLUG],
    );
    await eventually(
      "new metrics on both",
      everyServer(async (server) => {
        const body = (await product(server)).body.data;
        return body?.["status"] === "active" && JSON.stringify(body) !== JSON.stringify(before);
      }),
    );
  });

  test("listening connections killed: /readyz stays 200, a key revoked meanwhile is refused", async () => {
    const key = await newKey();
    for (const server of servers) assert.equal((await get(server, "/products", key.apiKey)).status, 200);
    const killed = await db!.pool.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'partner-yield-listener' and datname = $1",
      [db!.name],
    );
    assert.equal(killed.rowCount, 2, "one listening connection per server");
    await db!.pool.query("update api_keys set status = 'revoked', revoked_at = now() where id = $1", [
      key.id,
    ]);
    for (const server of servers) {
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
    }
    await eventually(
      "401 from both",
      everyServer(async (server) => (await get(server, "/products", key.apiKey)).status === 401),
    );
    await eventually("listening again", async () => {
      const rows = await db!.pool.query(
        "select 1 from pg_stat_activity where application_name = 'partner-yield-listener' and datname = $1",
        [db!.name],
      );
      return rows.rowCount === 2;
    });
    const next = await newKey();
    for (const server of servers) assert.equal((await get(server, "/products", next.apiKey)).status, 200);
    assert.equal((await runCli(["keys", "revoke", next.id], { DATABASE_URL: db!.url })).code, 0);
    await eventually(
      "the next revocation honoured too",
      everyServer(async (server) => (await get(server, "/products", next.apiKey)).status === 401),
    );
  });

  test("--read-cache off: the banner says every request reads PostgreSQL", async () => {
    const server = await startServerProcess(["--database-url", db!.url, "--read-cache", "off"]);
    try {
      assert.match(server.banner, /read cache: off \(--read-cache off\): every request reads PostgreSQL/);
      assert.equal((await get(server, "/products", DEMO.sandboxApiKey)).status, 200);
    } finally {
      await server.stop("SIGTERM");
    }
  });
});
