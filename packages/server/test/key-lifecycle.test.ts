/**
 * A partner manager's day with the CLI alone, against a fresh PostgreSQL database, while three
 * `partner-yield serve` processes run on it (two sandbox instances, one production): every command
 * is the real CLI in a child process, and every change is checked on every instance right after
 * the command (a revoked key within the read cache's bound: it is polled for a few seconds, not
 * timed; an event is refused at once, the store checks its credentials) — a created key
 * authenticates, a revoked one is 401 invalid_api_key, an unverified
 * partner's promotion changes nothing, a promoted partner's key works in production, an event
 * signed with either of two secrets verifies and a revoked secret's signature is 401
 * invalid_signature. Everything the CLI and the servers print is then scanned: each key and secret
 * appears exactly once, on the stdout of the command that created it.
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { hashApiKey, signBody } from "@partner-yield/core";
import { eventBody, gate, INBOUND } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { runCli, type ServerProcess, startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("lifecycle", { migrated: false, prefix: "py_keys_" }) : undefined;

interface CliRun {
  readonly args: readonly string[];
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Every CLI run, for the scan at the end. */
const runs: CliRun[] = [];

/** `partner-yield ARGS` with DATABASE_URL set, as a partner manager's shell would have it. */
async function cli(...args: string[]): Promise<CliRun> {
  const run = { args, ...(await runCli(args, { DATABASE_URL: db!.url })) };
  runs.push(run);
  return run;
}

function field(document: Record<string, unknown>, ...path: string[]): string {
  let value: unknown = document;
  for (const name of path) value = (value as Record<string, unknown>)[name];
  return value as string;
}

/** Status and error code of GET /products with `key` on `server`. */
async function products(server: ServerProcess, key: string): Promise<[number, string | undefined]> {
  const res = await fetch(`${server.url}/api/partner/products`, { headers: { "x-api-key": key } });
  const body = (await res.json()) as { code?: string };
  return [res.status, body.code];
}

/** Status and error code of a new event signed with `secret`. */
async function sendEvent(
  server: ServerProcess,
  key: string,
  secret: string,
): Promise<[number, string | undefined]> {
  const idempotencyKey = crypto.randomUUID();
  const body = eventBody(idempotencyKey);
  const res = await fetch(server.url + INBOUND, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": key,
      "x-partner-event": "partner.user.created",
      "x-partner-signature": signBody(secret, new TextEncoder().encode(body)),
      "idempotency-key": idempotencyKey,
    },
    body,
  });
  const answer = (await res.json()) as { code?: string };
  return [res.status, answer.code];
}

describe("a partner manager with the CLI alone, against PostgreSQL and running servers", () => {
  let sandbox: ServerProcess[] = [];
  let production: ServerProcess | undefined;
  const issued: { value: string; by: CliRun }[] = [];
  /** The sandbox key still active after the revocation test, for the events. */
  let sandboxKey: string | undefined;

  before(async () => {
    if (db === undefined) return;
    const migrated = await cli("db", "migrate");
    assert.equal(migrated.code, 0, migrated.stderr);
    const args = ["--database-url", db.url, "--log", "json", "--rate-limit-quota", "10000"];
    [sandbox[0], sandbox[1], production] = await Promise.all([
      startServerProcess(args),
      startServerProcess(args),
      startServerProcess([...args, "--env", "production"]),
    ]);
    sandbox = sandbox.filter((s) => s !== undefined);
  });
  after(async () => {
    await Promise.all([...sandbox, production].map((s) => s?.stop("SIGTERM")));
  });

  /**
   * `keys create|promote` or `secrets create`: the key or secret, recorded for the scan. Text
   * output (the key on its own indented line) or, with --json, the document's.
   */
  async function create(...args: string[]): Promise<{ value: string; id: string }> {
    const run = await cli(...args);
    assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
    let value: string;
    let id: string;
    if (args.includes("--json")) {
      const document = JSON.parse(run.stdout) as Record<string, Record<string, string> | string>;
      value = document["credential"] as string;
      id = field(document, document["key"] === undefined ? "secret" : "key", "id");
    } else {
      value = /^ {4}(\S+)$/m.exec(run.stdout)![1]!;
      id = /(?:API key|signing secret) (\d+)/.exec(run.stdout)![1]!;
      assert.match(run.stdout, /shown only this once/);
    }
    issued.push({ value, by: run });
    return { value, id };
  }

  /** Keys of the partner in the database (what the CLI's refusals must leave unchanged). */
  async function keyRows(): Promise<unknown[]> {
    return (await db!.pool.query("select id, environment, status from api_keys order by id")).rows;
  }

  test("a partner is added and listed unverified", async () => {
    const added = await cli("partners", "add", "acme", "--name", "Acme Wallet");
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /Added partner "acme" \(Acme Wallet\), not verified/);
    const list = await cli("partners", "list");
    assert.equal(list.code, 0);
    assert.match(list.stdout, /^acme\s+no\s+0\s+0\s+0\s+\S+\s+Acme Wallet$/m);
  });

  test("a sandbox key authenticates on both instances at once; its use shows in the list; revoked, it is 401 on the next request on both", async () => {
    const [first, spare] = await Promise.all([
      create("keys", "create", "--partner", "acme", "--env", "sandbox", "--label", "web app"),
      create("keys", "create", "--partner", "acme", "--env", "sandbox", "--json"),
    ]);
    sandboxKey = spare.value;
    for (const server of sandbox) assert.deepEqual(await products(server, first.value), [200, undefined]);
    assert.deepEqual(await products(production!, first.value), [401, "wrong_environment"]);

    // last_used_at is written off the request's path: wait for the row, then read it as a user would.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const row = await db!.pool.query("select last_used_at from api_keys where id = $1", [first.id]);
      if (row.rows[0]?.last_used_at !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const list = await cli("keys", "list", "--partner", "acme");
    assert.equal(list.code, 0, list.stderr);
    const row = new RegExp(
      `^${first.id}\\s+sandbox\\s+ypk_test_…${first.value.slice(-4)}\\s+active\\s+\\S+Z\\s+(\\S+)\\s+-\\s+web app$`,
      "m",
    ).exec(list.stdout);
    assert.ok(row !== null, list.stdout);
    assert.match(row[1]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, "LAST USED is a time");
    assert.match(
      list.stdout,
      new RegExp(`^${spare.id}\\s+sandbox\\s+ypk_test_…\\S{4}\\s+active\\s+\\S+Z\\s+never\\s`, "m"),
    );

    const revoked = await cli("keys", "revoke", first.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /1 active sandbox key left/);
    assert.equal(revoked.stderr, "", "no warning: a key is left");
    for (const server of sandbox) {
      // Each instance's read cache drops the key when PostgreSQL's notification arrives.
      const deadline = Date.now() + 5000;
      let answer = await products(server, first.value);
      while (answer[0] === 200 && Date.now() < deadline) answer = await products(server, first.value);
      assert.deepEqual(answer, [401, "invalid_api_key"]);
      assert.deepEqual(await products(server, spare.value), [200, undefined], "the other key still works");
    }
  });

  test("promote an unverified partner: refused, nothing changed; verified, promoted, its key works in production", async () => {
    const before = await keyRows();
    const refused = await cli("keys", "promote", "--partner", "acme");
    assert.equal(refused.code, 5);
    assert.match(refused.stderr, /partner "acme" is not verified: .*nothing was changed/);
    assert.match(refused.stderr, /partner-yield partners verify acme/);
    assert.equal(refused.stdout, "");
    assert.deepEqual(await keyRows(), before, "no key was added");
    assert.deepEqual(
      await products(production!, sandboxKey!),
      [401, "wrong_environment"],
      "still sandbox only",
    );

    const verified = await cli("partners", "verify", "acme");
    assert.equal(verified.code, 0, verified.stderr);
    const live = await create("keys", "promote", "--partner", "acme", "--label", "go-live");
    assert.match(live.value, /^ypk_live_/);
    assert.deepEqual(await products(production!, live.value), [200, undefined]);
    for (const server of sandbox)
      assert.deepEqual(await products(server, live.value), [401, "wrong_environment"]);
  });

  test("rotate the signing secret: events signed with either verify on both instances; the revoked one is 401 on the next request", async () => {
    const key = sandboxKey!;
    const [old, fresh] = await Promise.all([
      create("secrets", "create", "--partner", "acme"),
      create("secrets", "create", "--partner", "acme", "--json"),
    ]);
    for (const server of sandbox)
      for (const secret of [old, fresh])
        assert.deepEqual(await sendEvent(server, key, secret.value), [200, undefined]);
    const list = await cli("secrets", "list", "--partner", "acme");
    assert.equal(list.code, 0);
    for (const secret of [old, fresh])
      assert.ok(
        list.stdout
          .split("\n")
          .some(
            (line) =>
              line.startsWith(`${secret.id} `) && line.includes(`whsec_…${secret.value.slice(-4)}  active`),
          ),
        list.stdout,
      );

    const revoked = await cli("secrets", "revoke", old.id, "--partner", "acme");
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /1 active signing secret left/);
    for (const server of sandbox) {
      assert.deepEqual(await sendEvent(server, key, old.value), [401, "invalid_signature"]);
      assert.deepEqual(await sendEvent(server, key, fresh.value), [200, undefined]);
    }
  });

  test("help; unknown partners, keys and secrets (exit 4); a wrong environment and no database (exit 2); a database down (exit 1)", async () => {
    const [help, partner, key, secret, environment, missing, noDatabase, down] = await Promise.all([
      cli("secrets", "revoke", "--help"),
      cli("keys", "create", "--partner", "nobody", "--env", "sandbox"),
      cli("keys", "revoke", "999999"),
      cli("secrets", "revoke", "999999", "--partner", "acme", "--json"),
      cli("keys", "create", "--partner", "acme", "--env", "live"),
      cli("secrets", "list", "--partner", "nobody"),
      runCli(["partners", "list"]),
      runCli(["partners", "list", "--database-url", "postgres://postgres:hunter2@127.0.0.1:1/none"]),
    ]);
    runs.push(
      { args: ["partners", "list"], ...noDatabase },
      { args: ["partners", "list", "(down)"], ...down },
    );
    assert.equal(help.code, 0);
    assert.match(
      help.stdout,
      /Exit status:\n {2}0 {2}done\n[\s\S]*\n {2}4 {2}unknown partner, API key or signing secret/,
    );
    assert.deepEqual(
      [partner.code, key.code, secret.code, environment.code, missing.code, noDatabase.code, down.code],
      [4, 4, 4, 2, 4, 2, 1],
    );
    assert.match(partner.stderr, /there is no partner with id "nobody"/);
    assert.match(key.stderr, /there is no API key with id "999999"/);
    assert.deepEqual(JSON.parse(secret.stdout), {
      error: {
        code: "secret_not_found",
        message: 'partner "acme" has no signing secret with id "999999"',
        hint: "`partner-yield secrets list --partner acme` shows the ids of its secrets",
      },
    });
    assert.match(environment.stderr, /the environment is sandbox or production, not "live"/);
    assert.match(noDatabase.stderr, /give --database-url URL or set DATABASE_URL/);
    assert.match(down.stderr, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none: .*ECONNREFUSED/);
    assert.ok(!down.stderr.includes("hunter2"), "the password is not printed");
  });

  test("the scan: each key and secret printed exactly once, on the stdout of the command that created it", async () => {
    assert.equal(issued.length, 5, "three keys and two secrets were issued");
    const outputs = [
      ...runs.flatMap((r) => [
        { where: `partner-yield ${r.args.join(" ")} (stdout)`, text: r.stdout, run: r },
        { where: `partner-yield ${r.args.join(" ")} (stderr)`, text: r.stderr, run: undefined },
      ]),
      ...[...sandbox, production!].flatMap((s, i) => [
        { where: `server ${i} (stdout)`, text: s.output().stdout, run: undefined },
        { where: `server ${i} (stderr)`, text: s.output().stderr, run: undefined },
      ]),
    ];
    for (const { value, by } of issued) {
      const found = outputs.filter((o) => o.text.includes(value));
      assert.deepEqual(
        found.map((o) => o.where),
        [`partner-yield ${by.args.join(" ")} (stdout)`],
        "printed once, by its creator",
      );
      assert.equal(by.stdout.split(value).length, 2, "once in that output");
      if (value.startsWith("ypk_")) {
        const hash = hashApiKey(value);
        assert.deepEqual(
          outputs.filter((o) => o.text.includes(hash)).map((o) => o.where),
          [],
          "nor its hash",
        );
      }
    }
    // Anything of the shape of a key or secret, anywhere else, is a leak (the demo ones included).
    const shape = /ypk_(?:test|live)_[0-9A-Za-z]{38}|whsec_[A-Za-z0-9_-]{32}/g;
    const creators = new Set(issued.map((i) => i.by));
    for (const output of outputs) {
      const matches = output.text.match(shape) ?? [];
      const allowed = output.run !== undefined && creators.has(output.run) ? 1 : 0;
      assert.equal(
        matches.length,
        allowed,
        `${output.where}: ${matches.length} key- or secret-shaped strings`,
      );
    }
    // The servers logged every request (the scan covered their request logs).
    assert.ok(sandbox[0]!.output().stdout.includes('"path":"/api/partner/products"'), "request log scanned");
  });
});
