/**
 * `partner-yield partners|keys|secrets` in-process, on the in-memory `PartnerAdmin`: help and exit
 * statuses of every command, bad command lines (exit 2), refusals (exit 4 and 5, nothing changed),
 * `--json` documents, and what is printed where — a key or secret only by the command creating it,
 * on stdout. (key-lifecycle.test.ts drives the real CLI against PostgreSQL and running servers.)
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { hashApiKey, MemoryPartnerAdmin, parseApiKey } from "@partner-yield/core";
import { ADMIN_GROUPS, runAdminCommand } from "../src/admin-cli.js";
import { ADMIN_COMMANDS } from "../src/admin-commands.js";
import { helpText } from "../src/cli-options.js";

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A CLI over one in-memory admin: `cli("keys create --partner acme …")`. */
function cliOver(admin: MemoryPartnerAdmin, env: Record<string, string> = {}) {
  return async (...argv: string[]): Promise<Run> => {
    let stdout = "";
    let stderr = "";
    const [group, ...rest] = argv;
    const code = await runAdminCommand(group as "keys", rest, {
      env,
      admin,
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
    });
    return { code, stdout, stderr };
  };
}

function json(run: Run): Record<string, unknown> {
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe("partner-yield partners|keys|secrets (in-process, in-memory admin)", () => {
  test("every command has --help with its usage, options and exit statuses; each group lists its commands", async () => {
    const cli = cliOver(new MemoryPartnerAdmin());
    for (const command of ADMIN_COMMANDS) {
      const { code, stdout } = await cli(command.group, command.name, "--help");
      assert.equal(code, 0);
      assert.match(stdout, new RegExp(`partner-yield ${command.group} ${command.name}`));
      for (const flag of [
        ...command.flags.map((f) => `--${f.flag}`),
        "--database-url",
        "--json",
        "Exit status:",
      ])
        assert.ok(stdout.includes(flag), `${command.group} ${command.name}: ${flag}`);
      for (const exit of [0, 1, 2, 3, ...command.refusals])
        assert.match(stdout, new RegExp(`\\n  ${exit}  `));
      for (const exit of [4, 5].filter((e) => !command.refusals.includes(e as 4 | 5)))
        assert.doesNotMatch(stdout, new RegExp(`\\n  ${exit}  `), `${command.name} never exits ${exit}`);
    }
    for (const group of ADMIN_GROUPS) {
      const { code, stdout } = await cli(group, "--help");
      assert.equal(code, 0);
      for (const command of ADMIN_COMMANDS.filter((c) => c.group === group))
        assert.ok(stdout.includes(`partner-yield ${group} ${command.name}`), `${group} ${command.name}`);
      assert.match(helpText(), new RegExp(`partner-yield ${group} COMMAND`));
    }
  });

  test("bad command lines exit 2, say why, and never echo a key", async () => {
    const admin = new MemoryPartnerAdmin();
    const cli = cliOver(admin);
    const key = "ypk_test_p5uYqWuTm2niNkMzdEPWdUA45x3OkztF4Y5kDE";
    const cases: [string[], RegExp][] = [
      [["keys"], /missing command: create, list, revoke, promote/],
      [["keys", "rotate"], /unknown command "rotate" for keys/],
      [["keys", "create", "--env", "sandbox"], /missing --partner ID/],
      [["keys", "revoke"], /missing KEY_ID/],
      [
        ["keys", "create", "--partner", "acme", "--env", "sandbox", key],
        /unexpected argument \(a key or secret: not echoed\)/,
      ],
      [["keys", "list", "--partner", "acme", "--nope"], /Unknown option "--nope"/],
      [["partners", "add", "acme"], /missing --name NAME/],
      [
        ["keys", "create", "--partner", "acme", "--env", "staging"],
        /the environment is sandbox or production, not "staging"/,
      ],
      [["keys", "create", "--partner", "acme", "--env", key], /the environment is sandbox or production$/m],
      [["partners", "add", "Acme", "--name", "A"], /a partner id is 1 to 64 characters/],
    ];
    for (const [argv, message] of cases) {
      const run = await cli(...argv);
      assert.equal(run.code, 2, `${argv.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, message, argv.join(" "));
      assert.equal(run.stdout, "", "nothing on stdout");
      assert.ok(!run.stderr.includes(key), "the key is never echoed");
    }
    // Without an admin handed in, the database is required.
    const noDatabase = await runAdminCommand("partners", ["list"], {
      env: {},
      stdout: () => undefined,
      stderr: (text) => assert.match(text, /give --database-url URL or set DATABASE_URL/),
    });
    assert.equal(noDatabase, 2);
    assert.deepEqual(await admin.listPartners(), [], "nothing was added");
  });

  test("the whole lifecycle in JSON: each document as a script reads it, the key and secret only where created", async () => {
    const admin = new MemoryPartnerAdmin();
    const cli = cliOver(admin);
    const all: Run[] = [];
    const run = async (...argv: string[]) => {
      const r = await cli(...argv, "--json");
      all.push(r);
      return r;
    };

    const added = await run("partners", "add", "acme", "--name", "Acme Wallet");
    assert.equal(added.code, 0);
    assert.deepEqual(json(added)["partner"], {
      ...(json(added)["partner"] as object),
      id: "acme",
      name: "Acme Wallet",
      verified: false,
      active_keys: { sandbox: 0, production: 0 },
      active_signing_secrets: 0,
    });
    const created = await run("keys", "create", "--partner", "acme", "--env", "sandbox", "--label", "web");
    assert.equal(created.code, 0);
    assert.equal(json(created)["kind"], "api_key");
    const apiKey = json(created)["credential"] as string;
    assert.deepEqual(parseApiKey(apiKey), { ok: true, value: "sandbox" });
    assert.match(json(created)["notice"] as string, /shown only this once/);
    const key = json(created)["key"] as Record<string, unknown>;
    assert.deepEqual(
      [key["environment"], key["prefix"], key["last_four"], key["status"], key["label"], key["last_used_at"]],
      ["sandbox", "ypk_test_", apiKey.slice(-4), "active", "web", null],
    );
    assert.equal((await admin.keys.findByHash(hashApiKey(apiKey)))?.status, "active");

    const listed = await run("keys", "list", "--partner", "acme");
    assert.deepEqual(
      (json(listed)["keys"] as Record<string, unknown>[]).map((k) => k["id"]),
      [key["id"]],
    );

    const promoteRefused = await run("keys", "promote", "--partner", "acme");
    assert.equal(promoteRefused.code, 5);
    assert.equal((json(promoteRefused)["error"] as Record<string, string>)["code"], "partner_not_verified");
    assert.match(promoteRefused.stderr, /partners verify acme/);
    assert.equal((await run("keys", "create", "--partner", "acme", "--env", "production")).code, 5);
    assert.deepEqual(
      (await run("keys", "list", "--partner", "acme")).stdout,
      listed.stdout,
      "nothing changed",
    );

    assert.equal(json(await run("partners", "verify", "acme"))["changed"], true);
    assert.equal(json(await run("partners", "verify", "acme"))["changed"], false);
    const promoted = await run("keys", "promote", "--partner", "acme");
    assert.equal(promoted.code, 0);
    const liveKey = json(promoted)["credential"] as string;
    assert.deepEqual(parseApiKey(liveKey), { ok: true, value: "production" });
    assert.equal((await run("keys", "promote", "--partner", "acme")).code, 5, "already in production");

    const secret = json(await run("secrets", "create", "--partner", "acme"));
    assert.equal(secret["kind"], "signing_secret");
    const signingSecret = secret["credential"] as string;
    const secretId = (secret["secret"] as Record<string, string>)["id"]!;
    assert.match(signingSecret, /^whsec_[A-Za-z0-9_-]{32}$/);
    const secrets = json(await run("secrets", "list", "--partner", "acme"))["secrets"] as Record<
      string,
      unknown
    >[];
    assert.deepEqual(
      secrets.map((s) => [s["id"], s["status"], s["last_four"]]),
      [[secretId, "active", signingSecret.slice(-4)]],
    );

    const revoked = await run("secrets", "revoke", secretId, "--partner", "acme");
    assert.equal(revoked.code, 0);
    assert.deepEqual([json(revoked)["changed"], json(revoked)["active_left"]], [true, 0]);
    assert.match((json(revoked)["warnings"] as string[])[0]!, /no active signing secret left/);
    assert.equal(json(await run("secrets", "revoke", secretId, "--partner", "acme"))["changed"], false);
    assert.equal((await run("secrets", "revoke", secretId, "--partner", "other")).code, 4);

    const keyRevoked = await run("keys", "revoke", key["id"] as string);
    assert.deepEqual(
      [keyRevoked.code, json(keyRevoked)["changed"], json(keyRevoked)["active_left"]],
      [0, true, 0],
    );
    assert.equal((await admin.keys.findByHash(hashApiKey(apiKey)))?.status, "revoked");
    assert.equal((await run("keys", "revoke", "999")).code, 4);
    assert.equal((await run("keys", "list", "--partner", "nobody")).code, 4);
    assert.equal((await run("secrets", "create", "--partner", "nobody")).code, 4);
    assert.equal((await run("partners", "add", "acme", "--name", "Again")).code, 5);

    // Every document parses; each secret appears in exactly one, the one that created it.
    for (const r of all) JSON.parse(r.stdout);
    for (const [value, creator] of [
      [apiKey, created],
      [liveKey, promoted],
      [signingSecret, all.find((r) => r.stdout.includes('"kind":"signing_secret"'))!],
    ] as const) {
      assert.deepEqual(
        all.filter((r) => r.stdout.includes(value) || r.stderr.includes(value)),
        [creator],
        "printed once",
      );
      assert.ok(!creator.stderr.includes(value), "never on stderr");
    }
  });

  test("text output: tables without keys, the key block once, warnings on stderr", async () => {
    const admin = new MemoryPartnerAdmin();
    const cli = cliOver(admin);
    assert.match((await cli("partners", "list")).stdout, /No partners yet/);
    await cli("partners", "add", "acme", "--name", "Acme Wallet");
    const created = await cli("keys", "create", "--partner", "acme", "--env", "sandbox");
    const apiKey = /^ {4}(ypk_test_\S+)$/m.exec(created.stdout)?.[1];
    assert.ok(apiKey !== undefined, created.stdout);
    assert.match(created.stdout, /shown only this once/);
    assert.equal(created.stderr, "");
    const list = await cli("keys", "list", "--partner", "acme");
    assert.match(list.stdout, /^ID\s+ENV\s+KEY\s+STATUS\s+CREATED\s+LAST USED\s+REVOKED\s+LABEL$/m);
    assert.match(
      list.stdout,
      new RegExp(`^1\\s+sandbox\\s+ypk_test_…${apiKey.slice(-4)}\\s+active\\s+\\S+Z\\s+never\\s+-`, "m"),
    );
    assert.ok(!list.stdout.includes(apiKey));
    const partners = await cli("partners", "list");
    assert.match(partners.stdout, /^acme\s+no\s+1\s+0\s+0\s+\S+Z\s+Acme Wallet$/m);
    const revoked = await cli("keys", "revoke", "1");
    assert.match(revoked.stdout, /Revoked sandbox API key 1 of partner "acme"/);
    assert.match(revoked.stderr, /warning: partner "acme" has no active sandbox key left/);
    const again = await cli("keys", "revoke", "1");
    assert.deepEqual([again.code, again.stderr], [0, ""]);
    assert.match(again.stdout, /was already revoked at \S+Z; nothing changed/);
    const pasted = await cli("keys", "revoke", apiKey);
    assert.equal(pasted.code, 4);
    assert.match(pasted.stderr, /never the key itself/);
    assert.ok(!pasted.stderr.includes(apiKey), "the pasted key is not echoed");
  });
});
