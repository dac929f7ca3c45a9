/**
 * `partner-yield db` and `serve` of the previous release on a newer schema (expand/contract): this
 * code, against a database migrated by a simulated next release (one more migration), reports the
 * releases the schema runs, migrates nothing and serves on an additive schema, and refuses a
 * contracting one with exit 3 naming the versions.
 */
import assert from "node:assert/strict";
import { DEFAULT_FIXTURES_DIR } from "@partner-yield/node-adapter";
import { gate } from "@partner-yield/node-adapter/testing";
import { knownMigrations, migrate, parseMigration } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { runDbCommand } from "../src/db-command.js";
import { startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("dbcompat") : undefined;
/** This code's schema-code version. */
const N = knownMigrations().length;
/** The oldest schema-code version that runs on this code's schema: the highest marker of its migrations. */
const OLDEST = Math.max(...knownMigrations().map((m) => m.compatibleFrom));
const RUNS = OLDEST === N ? `${N} only` : `${OLDEST} to ${N}`;

/** `partner-yield db ARGS` in this process: exit status, stdout, stderr. */
async function dbCommand(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const { write: writeOut } = process.stdout;
  const { write: writeErr } = process.stderr;
  process.stdout.write = ((text: string) => out.push(text) > 0) as typeof process.stdout.write;
  process.stderr.write = ((text: string) => err.push(text) > 0) as typeof process.stderr.write;
  try {
    const code = await runDbCommand([...args, "--database-url", db!.url], {});
    return { code, stdout: out.join(""), stderr: err.join("") };
  } finally {
    process.stdout.write = writeOut;
    process.stderr.write = writeErr;
  }
}

function migration(version: number, name: string, sql: string) {
  return parseMigration(`${String(version).padStart(4, "0")}_${name}.sql`, sql);
}

describe("the previous release on a newer schema", () => {
  test("status names the releases a schema runs; on an additive one the previous release migrates nothing and serves", async () => {
    const own = await dbCommand("status");
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, new RegExp(`schema version\\s+${N} \\(current\\)`));
    assert.match(
      own.stdout,
      new RegExp(`runs releases\\s+${RUNS} \\(schema-code versions; this partner-yield is ${N}\\)`),
    );

    const next = [
      ...knownMigrations(),
      migration(
        N + 1,
        "product_notes",
        `-- compatible_from: ${N}
alter table products add column notes text;
`,
      ),
    ];
    await migrate(db!.pool, { migrations: next });
    const status = await dbCommand("status");
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      new RegExp(`schema version\\s+${N + 1} \\(newer than this partner-yield's ${N}, which runs on it\\)`),
    );
    assert.match(
      status.stdout,
      new RegExp(`runs releases\\s+${N} to ${N + 1} \\(schema-code versions; this partner-yield is ${N}\\)`),
    );
    const again = await dbCommand("migrate");
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      new RegExp(
        `schema version ${N + 1} is newer than this partner-yield's \\(${N}\\), which runs on it \\(${N + 1} product_notes: additive\\); nothing to apply`,
      ),
    );
    const imported = await dbCommand("import-fixtures", DEFAULT_FIXTURES_DIR);
    assert.equal(imported.code, 0, imported.stderr);

    const server = await startServerProcess(["--database-url", db!.url]);
    try {
      assert.match(server.banner, /data and events: PostgreSQL .*\(2 partners, 8 products\)/);
    } finally {
      await server.stop("SIGTERM");
    }
  });

  test("a contracting migration: status and migrate exit 3 naming the versions", async () => {
    const after = [
      ...knownMigrations(),
      migration(
        N + 1,
        "product_notes",
        `-- compatible_from: ${N}
alter table products add column notes text;
`,
      ),
      migration(
        N + 2,
        "drop_product_notes",
        `-- compatible_from: ${N + 2}
alter table products drop column notes;
`,
      ),
    ];
    await migrate(db!.pool, { migrations: after });
    for (const command of ["status", "migrate"]) {
      const { code, stderr } = await dbCommand(command);
      assert.equal(code, 3, command);
      assert.match(
        stderr,
        new RegExp(
          `schema is version ${N + 2}, newer than this partner-yield knows \\(${N}\\), and migration ${N + 2} \\(drop_product_notes\\) is not additive: it needs schema-code version ${N + 2} or later; this schema runs schema-code versions ${N + 2} only`,
        ),
        command,
      );
    }
  });
});
