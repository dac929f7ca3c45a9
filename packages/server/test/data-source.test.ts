/**
 * `partner-yield serve` with no data source: a node adapter installed without its sandbox fixtures
 * has no default fixtures directory, and `serve` must say so, naming --fixtures and
 * --database-url, instead of failing on a file path with no hint. The
 * installed layout is rebuilt here: the CLI's sources copied into
 * TMP/node_modules/@partner-yield/server/src and the node adapter's (which resolves the default
 * fixtures directory) into TMP/node_modules/@partner-yield/node-adapter/src, without its
 * fixtures/ (and TMP/node_modules/fixtures, a checkout's, does not exist either).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseCommandLine, UsageError } from "../src/cli-options.js";
import { missingDataSource } from "../src/data-source.js";
import { runCli } from "./server-process.js";

const PACKAGE = fileURLToPath(new URL("../", import.meta.url));
/** The node adapter this package depends on, where the install put it (a link to the workspace's). */
const ADAPTER = realpathSync(join(PACKAGE, "node_modules", "@partner-yield", "node-adapter"));

function run(cli: string, args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ["DATABASE_URL", "PARTNER_YIELD_FIXTURES", "REDIS_URL"]) delete env[name];
  const child = spawn(process.execPath, ["--import", "tsx", cli, ...args], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

describe("serve without a data source", () => {
  test("an installed serve without flags names --fixtures and --database-url (exit 2)", async () => {
    const root = mkdtempSync(join(tmpdir(), "py-installed-"));
    after(() => rmSync(root, { recursive: true, force: true }));
    const modules = join(root, "node_modules");
    const installed = join(modules, "@partner-yield", "server");
    const adapter = join(modules, "@partner-yield", "node-adapter");
    for (const [from, to] of [
      [PACKAGE, installed],
      [ADAPTER, adapter],
    ] as const) {
      mkdirSync(to, { recursive: true });
      cpSync(join(from, "src"), join(to, "src"), { recursive: true });
      cpSync(join(from, "package.json"), join(to, "package.json"));
    }
    // The other dependencies, hoisted beside them as an install would place them.
    symlinkSync(join(ADAPTER, "node_modules"), join(adapter, "node_modules"), "dir");
    for (const entry of readdirSync(join(PACKAGE, "node_modules"))) {
      if (entry.startsWith(".")) continue;
      const names = entry.startsWith("@")
        ? readdirSync(join(PACKAGE, "node_modules", entry)).map((name) => `${entry}/${name}`)
        : [entry];
      for (const name of names) {
        if (name === "@partner-yield/node-adapter") continue;
        mkdirSync(dirname(join(modules, name)), { recursive: true });
        symlinkSync(realpathSync(join(PACKAGE, "node_modules", name)), join(modules, name), "dir");
      }
    }
    assert.ok(
      !existsSync(join(root, "node_modules", "fixtures")),
      "the default fixtures directory is missing",
    );

    const { code, stderr } = await run(join(installed, "src", "cli.ts"), ["serve", "--port", "0"]);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /cannot start: no data to serve: no --fixtures was given and the default fixtures directory/,
    );
    assert.match(stderr, /the node adapter was installed without its sandbox fixtures/);
    assert.match(stderr, /--fixtures DIR \(or PARTNER_YIELD_FIXTURES\)/);
    assert.match(stderr, /--database-url URL \(or\s+DATABASE_URL\)/);
  });

  test("a --fixtures directory that does not exist: the same hint, naming it", async () => {
    const { code, stderr } = await runCli(["serve", "--port", "0", "--fixtures", "/nonexistent/py-fixtures"]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /the fixtures directory \/nonexistent\/py-fixtures does not exist/);
    assert.match(stderr, /--database-url URL/);
    assert.equal(missingDataSource(PACKAGE, false), undefined, "an existing directory is no refusal");
  });

  test("the pool's size and timeouts: flags or variables, with --database-url only", async () => {
    const db = ["serve", "--database-url", "postgres://u@127.0.0.1/x"];
    const pool = (argv: string[], env: Record<string, string> = {}) => {
      const parsed = parseCommandLine(argv, env);
      assert.equal(parsed.command, "serve");
      return parsed.command === "serve" ? parsed.config.postgresPool : undefined;
    };
    assert.deepEqual(pool(db), { max: 10, statementTimeoutMs: 5000, connectionTimeoutMs: 2000 });
    assert.deepEqual(
      pool([...db, "--pg-pool-size", "3", "--pg-statement-timeout", "250"], {
        PARTNER_YIELD_PG_CONNECT_TIMEOUT_MS: "900",
        PARTNER_YIELD_PG_POOL_SIZE: "50",
      }),
      { max: 3, statementTimeoutMs: 250, connectionTimeoutMs: 900 },
      "a flag wins over its variable",
    );
    assert.throws(() => pool([...db, "--pg-pool-size", "0"]), /--pg-pool-size must be an integer from 1/);
    assert.throws(
      () => pool(["serve", "--pg-statement-timeout", "100"]),
      (error: Error) => error instanceof UsageError && /applies only with --database-url/.test(error.message),
    );
  });
});
