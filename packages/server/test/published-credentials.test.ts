/**
 * The credentials published with partner-yield never unlock production (CONTRACT §4, "Published
 * credentials"): the fixtures hold only sandbox ones, `db import-fixtures --env production` refuses
 * them, `serve --env production` refuses to start on data holding one active (in memory and on
 * PostgreSQL) and starts once they are revoked, where the demo production key answers 401; no
 * banner outside the sandbox prints a credential.
 */
import assert from "node:assert/strict";
import { DEFAULT_FIXTURES_DIR, DEMO_CREDENTIALS, loadFixtureDir } from "@partner-yield/node-adapter";
import { gate, privateFixtures } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { publishedInFixtures } from "../src/published-credentials.js";
import { runCli, startServerProcess } from "./server-process.js";

const { describe, test } = gate({ PostgreSQL: await postgresReachable() });

/** Every published credential, to scan output for. */
const PUBLISHED = [
  DEMO_CREDENTIALS.sandboxApiKey,
  DEMO_CREDENTIALS.productionApiKey,
  DEMO_CREDENTIALS.revokedSandboxApiKey,
  DEMO_CREDENTIALS.otherPartnerSandboxApiKey,
  DEMO_CREDENTIALS.signingSecret,
  DEMO_CREDENTIALS.rotatedSigningSecret,
  DEMO_CREDENTIALS.otherPartnerSigningSecret,
];

function assertNoCredential(text: string): void {
  for (const credential of PUBLISHED) assert.ok(!text.includes(credential), "a credential was printed");
}

describe("published credentials and production", () => {
  test("the demo fixtures' published credentials are all found; fresh ones are not", async () => {
    const found = publishedInFixtures(loadFixtureDir(DEFAULT_FIXTURES_DIR));
    assert.deepEqual(found.map((c) => c.partnerId).sort(), [
      "contoso",
      "contoso",
      "northwind",
      "northwind",
      "northwind",
      "northwind",
    ]);
    assert.ok(found.every((c) => /ending in \S{4}$/.test(c.what)));
    assertNoCredential(JSON.stringify(found));
    const own = privateFixtures();
    try {
      assert.deepEqual(publishedInFixtures(loadFixtureDir(own.dir)), []);
    } finally {
      own.remove();
    }
  });

  test("serve --env production on the demo fixtures exits 2 and names them, printing none", async () => {
    const { code, stdout, stderr } = await runCli(["serve", "--env", "production", "--port", "0"]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /refusing to serve production: credentials published with partner-yield/);
    assert.match(stderr, /partner northwind: active API key \(live\) ending in QT1C/);
    assert.match(stderr, /partner northwind: active signing secret ending in nBxt/);
    assert.match(stderr, /keys revoke KEY_ID/);
    assert.doesNotMatch(stdout, /serving/);
    assertNoCredential(stdout + stderr);
  });

  test("a production banner prints no credential; the sandbox banner prints the demo ones", async () => {
    const own = privateFixtures();
    const production = await startServerProcess(["--env", "production", "--fixtures", own.dir]);
    try {
      assert.match(production.banner, /No credential is printed in production/);
      assert.ok(!production.banner.includes(own.productionApiKey));
      assert.ok(!production.banner.includes(own.signingSecret));
      assertNoCredential(production.banner);
    } finally {
      await production.stop("SIGTERM");
      own.remove();
    }
    const sandbox = await startServerProcess([]);
    try {
      assert.ok(sandbox.banner.includes(DEMO_CREDENTIALS.sandboxApiKey));
      // The demo production key is known to the sandbox (401 wrong_environment), never printed as usable.
      const answer = await fetch(`${sandbox.url}/api/partner/products`, {
        headers: { "x-api-key": DEMO_CREDENTIALS.productionApiKey },
      });
      assert.equal(answer.status, 401);
      assert.equal(((await answer.json()) as { code: string }).code, "wrong_environment");
    } finally {
      await sandbox.stop("SIGTERM");
    }
  });

  test("PostgreSQL: the import refuses them for production; serve refuses them until each is revoked", async () => {
    const db = await testDatabase("published", { migrated: true });
    const url = ["--database-url", db.url]; // dropped after the file (testDatabase)
    const refused = await runCli([
      "db",
      "import-fixtures",
      DEFAULT_FIXTURES_DIR,
      "--env",
      "production",
      ...url,
    ]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /refusing to import into production[\s\S]*Nothing was written/);
    assertNoCredential(refused.stdout + refused.stderr);
    const empty = await db.pool.query<{ n: string }>("select count(*)::text as n from partners");
    assert.equal(empty.rows[0]!.n, "0", "nothing written");
    // The same refusal through PARTNER_YIELD_ENV, as a deploy's environment sets it.
    const viaEnv = await runCli(["db", "import-fixtures", DEFAULT_FIXTURES_DIR, ...url], {
      PARTNER_YIELD_ENV: "production",
    });
    assert.equal(viaEnv.code, 2, viaEnv.stderr);

    // A sandbox import (the default) holds them: a production server on that database refuses.
    const imported = await runCli(["db", "import-fixtures", DEFAULT_FIXTURES_DIR, ...url]);
    assert.equal(imported.code, 0, imported.stderr);
    const serve = await runCli(["serve", "--env", "production", "--port", "0", "--log", "none", ...url]);
    assert.equal(serve.code, 2, serve.stderr);
    assert.match(serve.stderr, /active in the database/);
    assert.match(serve.stderr, /partner northwind: active API key \(live\) ending in QT1C/);
    assertNoCredential(serve.stdout + serve.stderr);
    const lastUsed = await db.pool.query("select id from api_keys where last_used_at is not null");
    assert.equal(lastUsed.rowCount, 0, "the check records no key use");

    // Revoked with the CLI, as the message says: the server starts, and the demo key is refused.
    for (const partner of ["northwind", "contoso"]) {
      const keys = JSON.parse(
        (await runCli(["keys", "list", "--partner", partner, "--json", ...url])).stdout,
      ) as {
        keys: { id: string; status: string }[];
      };
      for (const key of keys.keys.filter((k) => k.status === "active"))
        assert.equal((await runCli(["keys", "revoke", key.id, ...url])).code, 0);
      const secrets = JSON.parse(
        (await runCli(["secrets", "list", "--partner", partner, "--json", ...url])).stdout,
      ) as { secrets: { id: string; status: string }[] };
      for (const secret of secrets.secrets.filter((s) => s.status === "active"))
        assert.equal((await runCli(["secrets", "revoke", secret.id, "--partner", partner, ...url])).code, 0);
    }
    const server = await startServerProcess(["--env", "production", ...url]);
    try {
      assertNoCredential(server.banner);
      const answer = await fetch(`${server.url}/api/partner/products`, {
        headers: { "x-api-key": DEMO_CREDENTIALS.productionApiKey },
      });
      assert.equal(answer.status, 401);
      assert.equal(((await answer.json()) as { code: string }).code, "invalid_api_key");
    } finally {
      await server.stop("SIGTERM");
    }
  });
});
