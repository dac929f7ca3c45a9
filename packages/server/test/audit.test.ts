/**
 * The admin audit (migration 0006's `admin_audit`), as an operator runs the CLI (child processes):
 * keys create/revoke, secrets create/revoke, a refused promotion, the fixture import (a re-import
 * that keeps an operator's change to a product) each write one entry naming who, what, on what and
 * the rows before and after — never a key, a signing secret or the encryption key — and
 * `partner-yield audit list` shows them.
 */
import assert from "node:assert/strict";
import { DEFAULT_FIXTURES_DIR } from "@partner-yield/node-adapter";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { runCli, TEST_SECRET_KEYS } from "./server-process.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("audit", { migrated: true }) : undefined;

interface Entry {
  id: string;
  at: string;
  actor: string;
  command: string;
  target: string | null;
  outcome: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

describe("partner-yield audit", () => {
  test("--help, and bad options exit 2", async () => {
    const help = await runCli(["audit", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /partner-yield audit list \[--since TIME\] \[--limit N\] \[--json\]/);
    for (const args of [["list", "--limit", "0"], ["list", "--since", "yesterday"], ["show"]]) {
      const run = await runCli(["audit", ...args, "--database-url", db!.url]);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
    }
  });

  test("every admin command that changes something writes an entry, never a credential", async () => {
    const url = ["--database-url", db!.url];
    const cli = async (args: string[], env: Record<string, string> = {}) => {
      const run = await runCli([...args, ...url], env);
      return run;
    };
    const imported = await cli(["db", "import-fixtures", DEFAULT_FIXTURES_DIR, "--actor", "ops-alice"]);
    assert.equal(imported.code, 0, imported.stderr);
    await db!.pool.query(
      "update products set status = 'paused' where partner_id = 'northwind' and slug = 'usdc-base-prime'",
    );
    assert.equal((await cli(["db", "import-fixtures", DEFAULT_FIXTURES_DIR])).code, 0);

    assert.equal((await cli(["partners", "add", "acme", "--name", "Acme"])).code, 0);
    const key = JSON.parse(
      (await cli(["keys", "create", "--partner", "acme", "--env", "sandbox", "--json"])).stdout,
    ) as { credential: string; key: { id: string } };
    const revokedKey = await cli(["keys", "revoke", key.key.id], { PARTNER_YIELD_ACTOR: "ops-bob" });
    assert.equal(revokedKey.code, 0, revokedKey.stderr);
    const secret = JSON.parse((await cli(["secrets", "create", "--partner", "acme", "--json"])).stdout) as {
      credential: string;
      secret: { id: string };
    };
    assert.equal((await cli(["secrets", "revoke", secret.secret.id, "--partner", "acme"])).code, 0);
    // Without a key (a sandbox database): stored in plain text, with a warning saying so.
    const plain = await cli(["secrets", "create", "--partner", "acme"], { PARTNER_YIELD_SECRET_KEYS: "" });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(
      plain.stderr,
      /warning: the signing secret is stored in plain text: no PARTNER_YIELD_SECRET_KEYS/,
    );
    assert.equal((await cli(["keys", "promote", "--partner", "acme"])).code, 5, "not verified: refused");
    assert.equal((await cli(["keys", "list", "--partner", "acme"])).code, 0, "a list writes nothing");

    // The secret created with the children's key is stored sealed, not in plain text.
    const stored = await db!.pool.query<{ secret: string | null; key_id: string | null }>(
      "select secret, key_id from signing_secrets where id = $1",
      [secret.secret.id],
    );
    assert.deepEqual(stored.rows[0], { secret: null, key_id: "test" });

    const listed = await cli(["audit", "list", "--json"]);
    assert.equal(listed.code, 0, listed.stderr);
    const entries = (JSON.parse(listed.stdout) as { entries: Entry[] }).entries.reverse();
    assert.deepEqual(
      entries.map((e) => [e.command, e.outcome]),
      [
        ["db import-fixtures", "done"],
        ["db import-fixtures", "done"],
        ["partners add", "done"],
        ["keys create", "done"],
        ["keys revoke", "done"],
        ["secrets create", "done"],
        ["secrets revoke", "done"],
        ["secrets create", "done"],
        ["keys promote", "partner_not_verified"],
      ],
    );
    const [firstImport, reimport, , created, revoked] = entries;
    assert.equal(firstImport!.actor, "ops-alice");
    assert.equal(revoked!.actor, "ops-bob");
    assert.match(created!.actor, /.+@.+/, "the OS user and host by default");
    assert.equal(revoked!.target, key.key.id);
    assert.equal((revoked!.before!["key"] as Record<string, unknown>)["status"], "active");
    assert.equal((revoked!.after!["key"] as Record<string, unknown>)["status"], "revoked");
    assert.deepEqual(reimport!.after!["differing"], ["products northwind/usdc-base-prime"]);
    const text = listed.stdout + (await cli(["audit", "list"])).stdout;
    for (const credential of [key.credential, secret.credential, TEST_SECRET_KEYS.slice(5)])
      assert.ok(!text.includes(credential), "no credential in the audit");
    const all = await db!.pool.query<{ row: string }>(
      "select row_to_json(a)::text as row from admin_audit a",
    );
    for (const { row } of all.rows) assert.ok(!/ypk_|whsec_/.test(row), row);

    const limited = await cli(["audit", "list", "--limit", "2", "--json"]);
    assert.equal((JSON.parse(limited.stdout) as { entries: Entry[] }).entries.length, 2);
    const future = await cli(["audit", "list", "--since", "2999-01-01", "--json"]);
    assert.deepEqual(JSON.parse(future.stdout), { entries: [] });
  });
});
