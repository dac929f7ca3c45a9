/**
 * The rule for tests that need PostgreSQL or Redis on a machine without them: the tests are
 * skipped with a loud notice, except under CI=true, where they fail, so that a CI run can never
 * pass by skipping them.
 */
import { describe, test } from "node:test";
import type { TestFunctions } from "@partner-yield/core/testing";

const HOW_TO_RUN =
  "start PostgreSQL (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) and Redis " +
  '(redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no), or point ' +
  "PARTNER_YIELD_TEST_DATABASE_URL (a superuser connection) and PARTNER_YIELD_TEST_REDIS_URL at yours, " +
  "then run the tests again (.ci/run starts both when they are down)";

/**
 * `describe` and `test` for tests that need the services named in `unreachable` (service → why it
 * is unreachable, undefined when it answers): the real ones when every service answers; otherwise
 * each suite is skipped with the reason, after a notice on stderr — or, under CI=true, one failing
 * test says what is missing.
 * @example const { describe, test } = gate({ PostgreSQL: await postgresReachable() });
 */
export function gate(unreachable: Readonly<Record<string, string | undefined>>): TestFunctions & {
  readonly available: boolean;
} {
  const missing = Object.entries(unreachable).filter(([, why]) => why !== undefined);
  if (missing.length === 0) return { describe, test, available: true };
  const reason = missing.map(([service, why]) => `${service} is not reachable (${why})`).join("; ");
  if (process.env["CI"] === "true") {
    test(`required services (CI=true): ${reason}`, () => {
      throw new Error(`${reason}: under CI=true these tests must run; ${HOW_TO_RUN}`);
    });
  } else {
    test(`needs ${missing.map(([service]) => service).join(" and ")}`, {
      skip: `SKIPPED: ${reason}`,
    }, () => {});
    process.stderr.write(
      `\n${"!".repeat(100)}\n!! SKIPPED: ${reason}.\n!! These tests need the real services: ${HOW_TO_RUN}.\n${"!".repeat(100)}\n\n`,
    );
  }
  return {
    describe: (name, body) => describe(name, { skip: `SKIPPED: ${reason}` }, body),
    test: (name, body) => test(name, { skip: `SKIPPED: ${reason}` }, body),
    available: false,
  };
}
