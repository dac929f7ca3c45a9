/**
 * The read cache when its listening connection goes: killed on the server
 * (`pg_terminate_backend`), cut with every other connection (PostgreSQL "restarted" behind a TCP
 * proxy), or silent (a network that drops packets). While it is gone every read goes to the
 * database, so a key revoked meanwhile is refused; the cache comes back by itself, emptied.
 */
import assert from "node:assert/strict";
import { after } from "node:test";
import { gate, startTcpProxy } from "@partner-yield/node-adapter/testing";
import {
  ADMIN_URL,
  databaseUrl,
  postgresReachable,
  testDatabase,
} from "@partner-yield/store-postgres/testing";
import { createPool } from "../src/index.js";
import { cachedStores, eventually, importSample, trusted } from "./read-cache-support.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("read_cache_outage") : undefined;
const sample = db === undefined ? undefined : await importSample(db.pool);

/** A new active key of the sample's partner: its id and hash. */
async function newKey(): Promise<{ id: string; hash: string }> {
  const hash = Array.from({ length: 64 }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("");
  const row = await db!.pool.query<{ id: string }>(
    "insert into api_keys (partner_id, environment, key_hash) values ($1, 'sandbox', $2) returning id::text as id",
    [sample!.partnerId, hash],
  );
  return { id: row.rows[0]!.id, hash };
}

const revoke = (id: string) =>
  db!.pool.query("update api_keys set status = 'revoked', revoked_at = now() where id = $1", [id]);

describe("the read cache without its listening connection", () => {
  test("killed on the server: reads go through until it is back, then the cache answers again", async () => {
    const pool = createPool({ connectionString: db!.url, max: 4 });
    // It waits at least 1.5 s before reconnecting: the key below is revoked while it is away. Its
    // state callback throws: that must not take the listener (or the process) down.
    let reported = 0;
    const stores = cachedStores(pool, "py-cache-killed", {
      reconnectMinMs: 1500,
      onStateChange: () => {
        reported++;
        throw new Error("a broken logger");
      },
    });
    try {
      await eventually("subscribed", () => trusted(stores));
      const key = await newKey();
      await eventually("the key cached", async () => {
        const answer = stores.keys.findByHash(key.hash);
        assert.equal((await answer)?.status, "active");
        return !(answer instanceof Promise);
      });
      const killed = await db!.pool.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'py-cache-killed' and datname = $1",
        [db!.name],
      );
      assert.equal(killed.rowCount, 1, "one listening connection");
      await eventually("the loss noticed", () => !stores.readCache.state().listening);
      assert.equal(stores.readCache.state().trusted, false);
      await revoke(key.id);
      const answer = stores.keys.findByHash(key.hash);
      assert.ok(answer instanceof Promise, "read through while the listener is away");
      assert.equal((await answer)?.status, "revoked");
      await eventually(
        "subscribed again",
        () => trusted(stores) && stores.readCache.state().subscriptions >= 2,
      );
      assert.ok(reported >= 3, "subscribed, lost, subscribed again");
      assert.equal((await stores.keys.findByHash(key.hash))?.status, "revoked");
      const next = await newKey();
      await eventually("the cache answers again", async () => {
        const again = stores.keys.findByHash(next.hash);
        assert.equal((await again)?.status, "active");
        return !(again instanceof Promise);
      });
      await revoke(next.id);
      await eventually("and honours changes again", async () => {
        assert.equal((await stores.keys.findByHash(next.hash))?.status, "revoked");
      });
    } finally {
      await stores.close();
      await pool.end();
    }
  });

  test("PostgreSQL restarted behind a proxy: no stale answer after, and back by itself", async () => {
    const admin = new URL(ADMIN_URL);
    const proxy = await startTcpProxy(admin.hostname, Number(admin.port || 5432));
    after(() => proxy.close());
    const url = databaseUrl(db!.name, { host: "127.0.0.1", port: proxy.port });
    const pool = createPool({ connectionString: url, max: 4, connectionTimeoutMs: 1000 });
    const stores = cachedStores(pool, "py-cache-restart", { reconnectMinMs: 1500 });
    try {
      await eventually("subscribed", () => trusted(stores));
      const key = await newKey();
      await eventually("the key cached", async () => {
        const answer = stores.keys.findByHash(key.hash);
        assert.equal((await answer)?.status, "active");
        return !(answer instanceof Promise);
      });
      proxy.cut("refuse");
      await eventually("the loss noticed", () => !stores.readCache.state().listening);
      await revoke(key.id); // directly, while the instance cannot reach the database
      await assert.rejects(async () => stores.keys.findByHash(key.hash), { name: "StoreUnavailableError" });
      proxy.restore();
      await eventually("subscribed again", () => trusted(stores));
      assert.equal((await stores.keys.findByHash(key.hash))?.status, "revoked");
    } finally {
      await stores.close();
      await pool.end();
    }
  });

  test("a connection that went silent is noticed by its heartbeat and distrusted", async () => {
    const admin = new URL(ADMIN_URL);
    const proxy = await startTcpProxy(admin.hostname, Number(admin.port || 5432));
    after(() => proxy.close());
    // Only the listener goes through the proxy: the pool reads the database directly.
    const pool = createPool({ connectionString: db!.url, max: 4 });
    const url = databaseUrl(db!.name, { host: "127.0.0.1", port: proxy.port });
    const stores = cachedStores(pool, "py-cache-silent", {
      connection: { connectionString: url },
      heartbeatTimeoutMs: 500,
    });
    try {
      await eventually("subscribed", () => trusted(stores));
      const key = await newKey();
      await eventually("the key cached", async () => {
        const answer = stores.keys.findByHash(key.hash);
        assert.equal((await answer)?.status, "active");
        return !(answer instanceof Promise);
      });
      proxy.cut("blackhole");
      await revoke(key.id); // its notification is lost in the black hole
      await eventually("the silence noticed", () => !trusted(stores));
      // Not only the lease running out: the heartbeat's timeout ends the connection.
      await eventually("the connection given up", () => !stores.readCache.state().listening);
      assert.equal((await stores.keys.findByHash(key.hash))?.status, "revoked", "read through");
      proxy.restore();
      await eventually("subscribed again", () => trusted(stores));
      assert.equal((await stores.keys.findByHash(key.hash))?.status, "revoked");
    } finally {
      await stores.close();
      await pool.end();
    }
  });
});
