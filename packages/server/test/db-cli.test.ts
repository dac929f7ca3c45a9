/**
 * `partner-yield db` as an operator runs it (child processes): help, migrate (twice), import-fixtures
 * (twice: the second changes nothing), status, bad input (exit 2), a schema that is not current
 * (exit 3), an unreachable database (exit 1); and `serve`, which refuses an unmigrated database.
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { DEFAULT_FIXTURES_DIR } from "@partner-yield/node-adapter";
import { gate } from "@partner-yield/node-adapter/testing";
import { knownMigrations } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { helpText } from "../src/cli-options.js";
import { runDbCommand } from "../src/db-command.js";
import { runCli, startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("dbcli", { migrated: false }) : undefined;
/** The schema version this code knows. */
const LATEST = knownMigrations().length;

describe("partner-yield db", () => {
  test("--help lists the commands, the option and the exit codes", async () => {
    const { code, stdout } = await runCli(["db", "--help"]);
    assert.equal(code, 0);
    for (const text of [
      "migrate",
      "import-fixtures DIR",
      "status",
      "--database-url",
      "DATABASE_URL",
      "Exit status",
    ])
      assert.ok(stdout.includes(text), text);
    assert.match(helpText(), /partner-yield db COMMAND/);
  });

  test("bad command lines exit 2 and say why", async () => {
    const cases = [
      [["drop"], /unknown command "drop"/],
      [[], /missing command/],
      [["import-fixtures"], /needs the fixtures directory/],
      [["status", "extra", "--database-url", "postgres://x@127.0.0.1/y"], /unexpected argument "extra"/],
      [["status"], /give --database-url URL or set DATABASE_URL/],
      [["status", "--database-url", "mysql://x"], /must be a postgres:\/\/ URL/],
      [["status", "--nope"], /Unknown option/],
    ] as const;
    // The first through the real command line, the rest in-process (same code, no process start).
    const { code, stderr } = await runCli(["db", ...cases[0][0]]);
    assert.equal(code, 2);
    assert.match(stderr, cases[0][1]);
    for (const [args, message] of cases.slice(1)) {
      const errors: string[] = [];
      const write = process.stderr.write;
      process.stderr.write = ((text: string) => errors.push(text) > 0) as typeof process.stderr.write;
      let status: number;
      try {
        status = await runDbCommand(args, {});
      } finally {
        process.stderr.write = write;
      }
      assert.equal(status, 2, `${args.join(" ")}: ${errors.join("")}`);
      assert.match(errors.join(""), message);
    }
  });

  test("an unreachable database exits 1 with the reason", async () => {
    const { code, stderr } = await runCli([
      "db",
      "status",
      "--database-url",
      "postgres://postgres@127.0.0.1:1/none",
    ]);
    assert.equal(code, 1);
    assert.match(stderr, /ECONNREFUSED/);
  });

  test("migrate, import-fixtures twice (the second changes nothing), status; serve refuses before migrate", async () => {
    const url = ["--database-url", db!.url];
    const before = await runCli(["db", "status", ...url]);
    assert.equal(before.code, 3, before.stderr);
    assert.match(
      before.stdout,
      new RegExp(`schema version 0, this partner-yield needs ${LATEST}: run \`partner-yield db migrate\``),
    );
    const refused = await runCli(["serve", "--port", "0", ...url]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /cannot start: .*run `partner-yield db migrate` first/);

    const migrated = await runCli(["db", "migrate", ...url]);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(
      migrated.stdout,
      /applied 0001_initial\n {2}applied 0002_price_observation_time\n {2}applied 0003_revocation_is_final/,
    );
    const again = await runCli(["db", "migrate", ...url]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, new RegExp(`schema version ${LATEST} is current; nothing to apply`));

    const first = await runCli(["db", "import-fixtures", DEFAULT_FIXTURES_DIR, ...url]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /products\s+8\s+0\s+0/);
    assert.match(first.stdout, /\d+ row\(s\) written \(\d+ inserted, 0 overwritten\)/);
    const second = await runCli(["db", "import-fixtures", DEFAULT_FIXTURES_DIR, ...url]);
    assert.equal(second.code, 0);
    assert.match(second.stdout, /nothing changed/);
    assert.match(second.stdout, /products\s+0\s+0\s+0\s+8/);

    const status = await runCli(["db", "status", ...url]);
    assert.equal(status.code, 0);
    for (const line of [
      new RegExp(`schema version\\s+${LATEST} \\(current\\)`),
      /partners\s+2/,
      /api keys\s+3 active, 1 revoked/,
      /products\s+5 active, 2 paused, 1 deprecated/,
      /events\s+0/,
    ])
      assert.match(status.stdout, line);
    assert.ok(!status.stdout.includes("whsec_"), "no secret in the output");
  });

  test("a re-import keeps an operator's change (a product paused by SQL); --overwrite writes the file's", async () => {
    const url = ["--database-url", db!.url];
    const status = async () =>
      (
        await db!.pool.query<{ status: string }>(
          "select status from products where partner_id = 'northwind' and slug = 'usdc-base-prime'",
        )
      ).rows[0]?.status;
    assert.equal(await status(), "active");
    await db!.pool.query(
      "update products set status = 'paused' where partner_id = 'northwind' and slug = 'usdc-base-prime'",
    );
    const again = await runCli(["db", "import-fixtures", DEFAULT_FIXTURES_DIR, ...url]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await status(), "paused", "the operator's change is kept");
    assert.match(again.stdout, /products\s+0\s+0\s+1\s+7/);
    assert.match(
      again.stdout,
      /kept as the database has them[^\n]*\n\s+products northwind\/usdc-base-prime\n/,
    );
    assert.match(again.stdout, /nothing changed/);

    const overwritten = await runCli(["db", "import-fixtures", DEFAULT_FIXTURES_DIR, "--overwrite", ...url]);
    assert.equal(overwritten.code, 0, overwritten.stderr);
    assert.equal(await status(), "active", "--overwrite writes the file's value");
    assert.match(overwritten.stdout, /products\s+0\s+1\s+0\s+7/);
    assert.match(
      overwritten.stdout,
      /overwritten with the files' values[^\n]*\n\s+products northwind\/usdc-base-prime\n/,
    );
    assert.match(overwritten.stdout, /1 row\(s\) written \(0 inserted, 1 overwritten\)/);

    const misplaced = await runCli(["db", "status", "--overwrite", ...url]);
    assert.equal(misplaced.code, 2);
    assert.match(misplaced.stderr, /--overwrite applies to import-fixtures only/);
  });

  test("a broken fixture file exits 2 naming the file and field, and writes nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "py-db-fixtures-"));
    after(() => rmSync(dir, { recursive: true, force: true }));
    cpSync(DEFAULT_FIXTURES_DIR, dir, { recursive: true });
    const products = JSON.parse(readFileSync(join(dir, "products.json"), "utf8")) as Record<
      string,
      unknown
    >[];
    products[1]!["service_fee_bps"] = 20_000;
    writeFileSync(join(dir, "products.json"), JSON.stringify(products));
    const { code, stderr } = await runCli(["db", "import-fixtures", dir, "--database-url", db!.url]);
    assert.equal(code, 2);
    assert.match(stderr, /products\.json: \[1\]\.service_fee_bps/);
  });

  test("a server refuses a schema newer than it knows (exit 1), and so does db status (exit 3)", async () => {
    await db!.pool.query(
      "insert into schema_migrations (version, name, checksum) values (99, 'future', 'x')",
    );
    try {
      const status = await runCli(["db", "status", "--database-url", db!.url]);
      assert.equal(status.code, 3);
      assert.match(
        status.stderr,
        new RegExp(`schema is version 99, newer than this partner-yield knows \\(${LATEST}\\)`),
      );
      const serve = await runCli(["serve", "--port", "0", "--database-url", db!.url]);
      assert.equal(serve.code, 1);
      assert.match(serve.stderr, /newer than this partner-yield knows/);
    } finally {
      await db!.pool.query("delete from schema_migrations where version = 99");
    }
    // Back to the known schema: the server starts and says where its data is.
    const server = await startServerProcess(["--database-url", db!.url]);
    try {
      assert.match(server.banner, /data and events: PostgreSQL postgres:\/\/.*\(2 partners, 8 products\)/);
      assert.match(server.banner, /rate limits: in-memory/);
    } finally {
      await server.stop("SIGTERM");
    }
  });
});
