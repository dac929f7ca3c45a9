/**
 * Connection URLs are never printed with their credentials: the `serve` banner, `db status` and
 * `db migrate`, an admin command, and every failure of them, with the password in the userinfo or
 * in the query (`?password=`, which pg and ioredis both read), reachable or not.
 */
import assert from "node:assert/strict";
import { describe as plainDescribe, test as plainTest } from "node:test";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { REDIS_URL, redisReachable } from "@partner-yield/store-redis/testing";
import { redactConnectionText, redactUrl, secretsOfUrl } from "../src/redact-url.js";
import { runCli, startServerProcess } from "./server-process.js";

plainDescribe("redactUrl", () => {
  plainTest("masks the userinfo password and every credential-named query parameter, in any case", () => {
    assert.equal(
      redactUrl("postgres://app:pw1@db:5432/prod?sslmode=require&Password=pw2&PASS=a&secret=b&token=c&key=d"),
      "postgres://app:***@db:5432/prod?sslmode=require&Password=***&PASS=***&secret=***&token=***&key=***",
    );
    assert.equal(
      redactUrl("postgres://db/prod?SSLPassword=x&sslkey=%2Fsecret%2Fkey.pem&application_name=api"),
      "postgres://db/prod?SSLPassword=***&sslkey=***&application_name=api",
    );
    assert.equal(redactUrl("redis://:pw@cache:6379/0?password=pw"), "redis://:***@cache:6379/0?password=***");
    // A percent-encoded name is the name a driver reads.
    assert.equal(redactUrl("postgres://db/x?pass%77ord=zz"), "postgres://db/x?password=***");
    assert.equal(redactUrl("postgres://db/x#password=zz"), "postgres://db/x#***");
    assert.equal(redactUrl("postgres://db/x?sslmode=disable"), "postgres://db/x?sslmode=disable");
  });

  plainTest("a URL that does not parse is not echoed", () => {
    assert.equal(redactUrl("postgres://u:hunter22@[bad/x?password=hunter22"), "(unparsable URL)");
  });

  plainTest("secretsOfUrl names the password and the credential parameters, raw and decoded", () => {
    assert.deepEqual(secretsOfUrl("postgres://u:p%40ss@h/d?Password=a%2Bb&x=1").sort(), [
      "a%2Bb",
      "a+b",
      "p%40ss",
      "p@ss",
    ]);
    assert.deepEqual(secretsOfUrl("not a url"), []);
  });
});

plainDescribe("redactConnectionText", () => {
  plainTest(
    "masks the given URLs' secrets wherever they occur, every URL in the text, and assignments",
    () => {
      const given = "postgres://root@127.0.0.1:1/x?password=Hunter2Secret";
      const text = [
        "password authentication failed (sent Hunter2Secret)",
        "connect to redis://:OtherSecret@h:1/0?token=T0kenValue failed",
        "conninfo host=h password=Plain1Secret sslkey=/k.pem",
        "key ypk_test_abcdef1234 refused",
      ].join("\n");
      const out = redactConnectionText(text, [`--database-url=${given}`, undefined]);
      for (const secret of [
        "Hunter2Secret",
        "OtherSecret",
        "T0kenValue",
        "Plain1Secret",
        "/k.pem",
        "abcdef1234",
      ])
        assert.ok(!out.includes(secret), `${secret} in ${out}`);
      assert.match(out, /redis:\/\/:\*\*\*@h:1\/0\?token=\*\*\*/);
      assert.match(out, /password=\*\*\*/);
      assert.equal(out.split("\n").length, 4, "the lines are kept");
    },
  );

  plainTest("a URL in running text that does not parse keeps only its scheme", () => {
    assert.equal(
      redactConnectionText("bad postgres://u:s3cr3tpw@[h/x here"),
      "bad postgres://(unparsable URL) here",
    );
  });
});

const { describe, test, available } = gate({
  PostgreSQL: await postgresReachable(),
  Redis: await redisReachable(),
});
const db = available ? await testDatabase("redact") : undefined;

/** The value no output may hold; in the userinfo and the query, as pg and ioredis both read it. */
const SECRET = "Tr0ub4dor-and-3";

function withQueryPassword(url: string): string {
  const u = new URL(url);
  u.searchParams.set("password", SECRET);
  return u.toString();
}

function assertNoSecret(what: string, output: { stdout: string; stderr: string }): void {
  for (const [stream, text] of [
    ["stdout", output.stdout],
    ["stderr", output.stderr],
  ] as const) {
    assert.ok(!text.includes(SECRET), `${what}: the password on ${stream}:\n${text}`);
    assert.ok(!text.includes(encodeURIComponent(SECRET)), `${what}: the encoded password on ${stream}`);
  }
}

describe("no output shows a connection password", () => {
  test("serve: the banner with a reachable PostgreSQL and Redis given ?password=", async () => {
    const database = withQueryPassword(db!.url);
    const redis = withQueryPassword(REDIS_URL);
    const server = await startServerProcess(["--database-url", database, "--redis-url", redis]);
    const output = server.output();
    await server.stop("SIGTERM");
    assert.match(output.stdout, /PostgreSQL postgres:\/\/.*password=\*\*\*/);
    assert.match(output.stdout, /Redis redis:\/\/.*password=\*\*\*/);
    assertNoSecret("serve", server.output());
  });

  test("serve: unreachable PostgreSQL, unreachable Redis (exit 1, the error on stderr)", async () => {
    const down = `postgres://root:${SECRET}@127.0.0.1:1/x?password=${SECRET}`;
    const pg = await runCli(["serve", "--port", "0", "--database-url", down]);
    assert.equal(pg.code, 1, pg.stderr);
    assertNoSecret("serve, PostgreSQL down", pg);
    const redis = await runCli(
      ["serve", "--port", "0", "--redis-url", `redis://:${SECRET}@127.0.0.1:1/0?password=${SECRET}`],
      { DATABASE_URL: withQueryPassword(db!.url) },
    );
    assert.equal(redis.code, 1, redis.stderr);
    assert.match(redis.stderr, /redis/);
    assertNoSecret("serve, Redis down", redis);
  });

  test("db status and db migrate, reachable and not, by flag and by DATABASE_URL", async () => {
    const reachable = withQueryPassword(db!.url);
    for (const command of ["status", "migrate"]) {
      const byFlag = await runCli(["db", command, "--database-url", reachable]);
      assert.equal(byFlag.code, 0, byFlag.stderr);
      assert.match(byFlag.stdout, /password=\*\*\*/);
      assertNoSecret(`db ${command}`, byFlag);
      const byEnv = await runCli(["db", command], { DATABASE_URL: reachable });
      assert.equal(byEnv.code, 0, byEnv.stderr);
      assertNoSecret(`db ${command} (DATABASE_URL)`, byEnv);
    }
    const down = await runCli([
      "db",
      "status",
      "--database-url",
      `postgres://u:${SECRET}@127.0.0.1:1/x?password=${SECRET}`,
    ]);
    assert.equal(down.code, 1, down.stderr);
    assertNoSecret("db status, PostgreSQL down", down);
    const malformed = await runCli(["db", "status", "--database-url", `postgres://u:${SECRET}@[bad/x`]);
    assert.equal(malformed.code, 2);
    assertNoSecret("db status, a malformed URL", malformed);
  });

  test("an admin command, reachable and not, text and --json", async () => {
    const reachable = withQueryPassword(db!.url);
    const listed = await runCli(["partners", "list", "--database-url", reachable]);
    assert.equal(listed.code, 0, listed.stderr);
    assertNoSecret("partners list", listed);
    const down = `postgres://u:${SECRET}@127.0.0.1:1/x?PASSWORD=${SECRET}`;
    for (const json of [[], ["--json"]]) {
      const failed = await runCli(["partners", "list", "--database-url", down, ...json]);
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(failed.stderr, /PASSWORD=\*\*\*/);
      assertNoSecret(`partners list ${json.join(" ")}, PostgreSQL down`, failed);
    }
  });
});
