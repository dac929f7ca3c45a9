/**
 * A PostgreSQL cut, as `serve` wires the log (issue 27, logs): the requests that meet it are
 * answered 503 and logged at level error, one stack for the cause, one `store_down` line, and one
 * `store_up` line when the database answers again — not a stack trace per request.
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import {
  createNodePartnerApi,
  type LogEntry,
  type RequestLogEntry,
  type RunningServer,
} from "@partner-yield/node-adapter";
import {
  gate,
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
import { type StoreWatch, watchStores } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });

// Created at the top level: testDatabase drops what it made after the file's tests.
const db = available ? await testDatabase("store_log") : undefined;

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), what);
}

describe("the log of a PostgreSQL cut", () => {
  let proxy: TcpProxy;
  let stores: PostgresStores;
  let server: RunningServer;
  let watch: StoreWatch;
  const entries: LogEntry[] = [];

  before(async () => {
    if (db === undefined) return;
    await importData(db.pool, dataSetOf(loadSandbox()));
    const target = new URL(db.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    stores = createPostgresStores({
      connectionString: databaseUrl(db.name, { host: "127.0.0.1", port: proxy.port }),
      connectionTimeoutMs: 1000,
      statementTimeoutMs: 1000,
    });
    const log = (entry: LogEntry) => entries.push(entry);
    watch = watchStores({ checks: { events: stores.ping }, log, intervalMs: 50 });
    const api = createNodePartnerApi({ ...stores, log, onStoreError: () => watch.suspect() });
    server = await startTestServer({ api, log });
  });
  after(async () => {
    if (db === undefined) return;
    watch.close();
    await server.close();
    await proxy.close();
  });

  test("503s at level error, one stack, one store_down, then one store_up", async () => {
    const get = async () => {
      const res = await fetch(`${server.url}/api/partner/products`, { headers: { "x-api-key": KEY } });
      await res.text();
      return res.status;
    };
    assert.equal(await get(), 200);
    proxy.cut("refuse");
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await get());
    assert.deepEqual(statuses, [503, 503, 503, 503, 503]);
    await until(() => entries.some((e) => e.msg === "store_down"), "a store_down line");
    proxy.restore();
    await until(() => entries.some((e) => e.msg === "store_up"), "a store_up line");
    assert.equal(await get(), 200);

    const lines = entries.filter((e): e is RequestLogEntry => e.msg === "request");
    assert.deepEqual(
      lines.filter((l) => l.status === 503).map((l) => [l.level, l.code]),
      Array(5).fill(["error", "service_unavailable"]),
    );
    const stores = entries.filter((e) => e.msg === "store_down" || e.msg === "store_up");
    assert.deepEqual(
      stores.map((e) => [e.msg, "store" in e ? e.store : undefined]),
      [
        ["store_down", "events"],
        ["store_up", "events"],
      ],
    );
    // Five failed requests: one stack for each distinct cause they met, not one each.
    const errors = entries.filter((e) => e.msg === "service_unavailable");
    assert.ok(errors.length >= 1 && errors.length < statuses.length, JSON.stringify(errors));
  });
});
