/**
 * Expand/contract, on databases of their own: the previous release (this code's migration list,
 * one shorter than the database's) runs on the next release's additive schema and refuses a
 * contracting one, naming the versions; a database from before the compatible_from markers is
 * read and migrated; every shipped migration file states a marker the parser accepts.
 */
import assert from "node:assert/strict";
import { test as plainTest } from "node:test";
import { gate, loadSandbox } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import {
  assertSchemaCurrent,
  createPostgresStores,
  dataSetOf,
  importData,
  knownMigrations,
  type Migration,
  migrate,
  parseMigration,
  SchemaVersionError,
  schemaStatus,
} from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const before = available ? await testDatabase("premarkers", { migrated: false }) : undefined;
const db = available ? await testDatabase("compat", { migrated: false }) : undefined;

const known = knownMigrations();
/** This code's schema-code version: the previous release in the tests below. */
const N = known.length;
/** The migration that added the marker column. */
const MARKERS = 5;

/** A migration N+k of a release that does not exist yet. */
function future(version: number, name: string, sql: string): Migration {
  return parseMigration(`${String(version).padStart(4, "0")}_${name}.sql`, sql);
}
/** The next release's: a new table and a new nullable column, which this code never reads. */
const expand = future(
  N + 1,
  "expand_probe",
  `-- compatible_from: ${N}
create table expand_probe (id integer primary key);
alter table products add column probe_note text;
`,
);
/** The release after: drops what the previous one added; only code from N+2 may run on it. */
const contract = future(
  N + 2,
  "contract_probe",
  `-- compatible_from: ${N + 2}
drop table expand_probe;
`,
);

async function markers(pool: NonNullable<typeof db>["pool"]): Promise<(number | null)[]> {
  const rows = await pool.query<{ compatible_from: number | null }>(
    "select compatible_from from schema_migrations order by version",
  );
  return rows.rows.map((row) => row.compatible_from);
}

plainTest(
  "every shipped migration states its compatible_from; the parser refuses a missing or impossible one",
  () => {
    assert.ok(N >= MARKERS);
    for (const m of known) assert.ok(m.compatibleFrom <= m.version, `${m.version}`);
    assert.equal(known[MARKERS - 1]!.compatibleFrom, MARKERS - 1, "0005 is additive");
    assert.deepEqual(
      known.slice(0, MARKERS - 1).map((m) => m.compatibleFrom),
      [0, 1, 2, 3],
      "0001-0004 predate the marker: each additive to the release before it",
    );
    assert.equal(expand.compatibleFrom, N);
    assert.throws(() => future(N + 1, "unmarked", "create table x ();"), /no "-- compatible_from: N" line/);
    assert.throws(
      () => future(N + 1, "too_high", `-- compatible_from: ${N + 2}\n`),
      /above the migration's version/,
    );
  },
);

describe("expand/contract across releases", () => {
  test("a database from before the markers (no compatible_from column) is read, refused as pending, then migrated", async () => {
    const previous = known.slice(0, MARKERS - 1);
    await migrate(before!.pool, { migrations: previous });
    const columns = await before!.pool.query(
      "select 1 from information_schema.columns where table_name = 'schema_migrations' and column_name = 'compatible_from'",
    );
    assert.equal(columns.rowCount, 0, "a release before 0005 leaves no marker column");
    const old = await assertSchemaCurrent(before!.pool, { migrations: previous });
    assert.deepEqual(old.supported, { oldest: MARKERS - 1, newest: MARKERS - 1 });

    const status = await schemaStatus(before!.pool);
    assert.deepEqual(
      [status.current, status.pending.map((m) => m.version)],
      [MARKERS - 1, known.slice(MARKERS - 1).map((m) => m.version)],
    );
    await assert.rejects(
      assertSchemaCurrent(before!.pool),
      (e: Error) => e instanceof SchemaVersionError && /run `partner-yield db migrate` first/.test(e.message),
    );
    const applied = await migrate(before!.pool);
    assert.deepEqual(
      applied.map((m) => m.version),
      known.slice(MARKERS - 1).map((m) => m.version),
    );
    assert.deepEqual(
      await markers(before!.pool),
      known.map((m) => m.compatibleFrom),
      "0005 records the markers of 0001-0004; later ones are recorded as applied",
    );
    const now = await assertSchemaCurrent(before!.pool);
    assert.equal(now.supported.newest, N);
  });

  test("the previous release runs on the next release's additive schema: serves, writes, migrates nothing", async () => {
    const next = [...known, expand];
    assert.deepEqual(
      (await migrate(db!.pool, { migrations: next })).map((m) => m.version),
      next.map((m) => m.version),
    );
    assert.equal((await markers(db!.pool)).at(-1), N, "the marker is recorded with the migration");

    // This code is the previous release now.
    const status = await assertSchemaCurrent(db!.pool);
    assert.deepEqual([status.current, status.latest, status.pending.length], [N + 1, N, 0]);
    assert.deepEqual(status.newer, [{ version: N + 1, name: "expand_probe", compatibleFrom: N }]);
    assert.deepEqual(status.supported, { oldest: N, newest: N + 1 });
    assert.deepEqual(await migrate(db!.pool), [], "nothing to apply");
    // Its stores work on the expanded schema, the import writes there, and the reads see it.
    const report = await importData(db!.pool, dataSetOf(loadSandbox()));
    assert.ok(report.products.inserted > 0);
    const stores = createPostgresStores(db!.pool);
    assert.equal((await stores.partners.getPartner("northwind"))?.id, "northwind");

    // The next release runs on it too, as current.
    const own = await assertSchemaCurrent(db!.pool, { migrations: next });
    assert.deepEqual([own.newer.length, own.supported.oldest, own.supported.newest], [0, N, N + 1]);
  });

  test("a contracting migration makes every release before it refuse, naming the versions", async () => {
    const after = [...known, expand, contract];
    await migrate(db!.pool, { migrations: after });
    for (const release of [known, [...known, expand]]) {
      const version = release.length;
      const refusal = (e: Error) =>
        e instanceof SchemaVersionError &&
        e.message.includes(
          `schema is version ${N + 2}, newer than this partner-yield knows (${version}), and migration ${N + 2} (contract_probe) is not additive: it needs schema-code version ${N + 2} or later; this schema runs schema-code versions ${N + 2} only`,
        );
      await assert.rejects(
        assertSchemaCurrent(db!.pool, { migrations: release }),
        refusal,
        `release ${version}`,
      );
      await assert.rejects(
        migrate(db!.pool, { migrations: release }),
        refusal,
        `release ${version} migrating`,
      );
    }
    const status = await assertSchemaCurrent(db!.pool, { migrations: after });
    assert.deepEqual(status.supported, { oldest: N + 2, newest: N + 2 });
  });
});
