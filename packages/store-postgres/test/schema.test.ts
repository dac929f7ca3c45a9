/**
 * Migrations and the import, on a database of their own: concurrent migrate calls apply each
 * migration once; a history that differs from the files is refused; an import never re-activates a
 * key or secret revoked in the database; a product's deprecation is terminal.
 */
import assert from "node:assert/strict";
import { gate, loadSandbox } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import {
  assertSchemaCurrent,
  createPool,
  createPostgresStores,
  dataSetOf,
  importData,
  knownMigrations,
  migrate,
  SchemaVersionError,
  schemaStatus,
} from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("schema", { migrated: false }) : undefined;

describe("schema migrations and the fixture import", () => {
  test("four processes migrating at once apply each migration exactly once", async () => {
    const pools = Array.from({ length: 4 }, () => createPool({ connectionString: db!.url, max: 1 }));
    try {
      const applied = await Promise.all(pools.map((pool) => migrate(pool)));
      assert.equal(applied.flat().length, knownMigrations().length);
      await assertSchemaCurrent(db!.pool);
      const status = await schemaStatus(db!.pool);
      assert.deepEqual(
        [status.current, status.latest, status.pending.length],
        [knownMigrations().length, knownMigrations().length, 0],
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  test("a migration applied from another version of its file is refused", async () => {
    await db!.pool.query("update schema_migrations set checksum = 'edited' where version = 1");
    try {
      await assert.rejects(
        schemaStatus(db!.pool),
        (e: Error) => e instanceof SchemaVersionError && /differs/.test(e.message),
      );
      await assert.rejects(migrate(db!.pool), SchemaVersionError);
    } finally {
      await db!.pool.query("update schema_migrations set checksum = $1 where version = 1", [
        knownMigrations()[0]!.checksum,
      ]);
    }
  });

  test("an import never re-activates what was revoked in the database, and changes nothing the second time", async () => {
    const data = dataSetOf(loadSandbox());
    await importData(db!.pool, data);
    await db!.pool.query(
      "update api_keys set status = 'revoked', revoked_at = now() where status = 'active'",
    );
    await db!.pool.query("update signing_secrets set status = 'revoked', revoked_at = now()");
    const report = await importData(db!.pool, data);
    for (const [table, changes] of Object.entries(report))
      assert.deepEqual([changes.inserted, changes.updated], [0, 0], table);
    const stores = createPostgresStores(db!.pool);
    for (const key of data.keys) assert.equal((await stores.keys.findByHash(key.keyHash))?.status, "revoked");
    assert.deepEqual((await stores.partners.getPartner("northwind"))?.signingSecrets, []);
  });

  test("revocation is final: the database refuses to bring a key or a signing secret back", async () => {
    // The import test above revoked every key and secret.
    for (const table of ["api_keys", "signing_secrets"]) {
      await assert.rejects(
        db!.pool.query(`update ${table} set status = 'active', revoked_at = null`),
        /revocation is final/,
        table,
      );
      await assert.rejects(
        db!.pool.query(`update ${table} set revoked_at = now() - interval '1 day'`),
        /revocation is final/,
        `${table}: the time of revocation stays`,
      );
    }
    // Other columns of a revoked row may change (e.g. a key's label).
    await db!.pool.query("update api_keys set label = 'leaked in a log' where status = 'revoked'");
  });

  test("deprecated is terminal: the database refuses to bring a product back", async () => {
    await assert.rejects(
      db!.pool.query("update products set status = 'active' where slug = 'dai-optimism-legacy'"),
      /deprecated is terminal/,
    );
    await db!.pool.query("update products set status = 'paused' where slug = 'usdc-base-prime'");
    await db!.pool.query("update products set status = 'active' where slug = 'usdc-base-prime'");
  });
});
