/**
 * `createPool({ schema })`: the tables live in a schema of the team's choosing. `migrate` creates
 * it and every table there (nothing in `public`); the stores, the read cache's listening connection
 * and the event store work in it; a bad name or a second place to set it is refused.
 */
import assert from "node:assert/strict";
import { after } from "node:test";
import { createPartnerApi } from "@partner-yield/core";
import { DEMO, gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import type pg from "pg";
import { createPool, migrate } from "../src/index.js";
import { cachedStores, eventually, importSample, trusted } from "./read-cache-support.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("schema_option", { migrated: false }) : undefined;

describe("the schema option of createPool", () => {
  const pools: pg.Pool[] = [];
  after(async () => {
    for (const pool of pools) await pool.end().catch(() => undefined);
  });

  test("migrate creates the schema and every table in it; the stores and the read cache work there", async () => {
    assert.ok(db !== undefined);
    const pool = createPool({ connectionString: db.url, schema: "team_yield", max: 4 });
    pools.push(pool);
    await migrate(pool);
    await migrate(pool); // again: nothing to do
    const tables = await db.pool.query<{ schema: string; name: string }>(
      `select table_schema as schema, table_name as name from information_schema.tables
       where table_schema not in ('pg_catalog', 'information_schema') order by 1, 2`,
    );
    assert.deepEqual(
      [...new Set(tables.rows.map((row) => row.schema))],
      ["team_yield"],
      "no table outside it",
    );
    const names = tables.rows.map((row) => row.name);
    for (const table of ["api_keys", "events", "partners", "products", "schema_migrations"]) {
      assert.ok(names.includes(table), `${table} in team_yield`);
    }

    const sample = await importSample(pool);
    const stores = cachedStores(pool, "schema-option-cache");
    const api = createPartnerApi({ environment: "sandbox", ...stores });
    const get = () =>
      api.handle({
        method: "GET",
        path: "/api/partner/products",
        headers: { "x-api-key": DEMO.sandboxApiKey },
      });
    assert.equal((await get()).status, 200);
    await eventually("the read cache subscribed", () => trusted(stores));
    // A change made in the schema reaches the cache through its listening connection.
    await pool.query("update api_keys set status = 'revoked', revoked_at = now() where key_hash = $1", [
      sample.keyHash,
    ]);
    await eventually("the revoked key refused", async () => (await get()).status === 401);
    const appended = await stores.events.append({
      partnerId: sample.partnerId,
      environment: "sandbox",
      idempotencyKey: "schema-option-1",
      fingerprint: "f".repeat(64),
      eventType: "partner.user.created",
      occurredAt: "2026-11-20T10:15:00Z",
      data: {},
      rawBody: '{"data":{}}',
      receivedAt: Date.now(),
    });
    assert.equal(appended.status, "created");
    const count = await db.pool.query<{ n: string }>("select count(*)::text as n from team_yield.events");
    assert.equal(count.rows[0]?.n, "1");
    await stores.readCache.close();
  });

  test("a name that is not a plain identifier, or a URL that sets its own options, is refused", async () => {
    assert.ok(db !== undefined);
    for (const schema of ["Team", "1st", "a-b", 'x"; drop table events; --', "", "a".repeat(64)]) {
      assert.throws(() => createPool({ connectionString: db.url, schema }), RangeError, schema);
    }
    assert.throws(
      () =>
        createPool({ connectionString: `${db.url}?options=-c%20search_path%3Dother`, schema: "team_yield" }),
      /one place/,
    );
  });
});
