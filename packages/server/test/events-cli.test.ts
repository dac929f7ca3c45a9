/**
 * `partner-yield events` as an operator runs it: --help, bad command lines (exit 2), `tail --follow`
 * printing an event posted to a server on the same database after its 200 (functional: it waits up
 * to 10 s, no timing is asserted), `consumers list` and `reset` (exit 4 for an event the log does
 * not hold), and `prune`, which refuses less than the idempotency window.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DEFAULT_FIXTURES_DIR, loadFixtureDir } from "@partner-yield/node-adapter";
import { eventBody, eventHeaders, gate, INBOUND, startTestServer } from "@partner-yield/node-adapter/testing";
import {
  dataSetOf,
  importData,
  PostgresEventConsumers,
  PostgresEventStore,
} from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { helpText } from "../src/cli-options.js";
import { runEventsCommand } from "../src/events-command.js";
import { cliArgs, cliEnv } from "./cli-command.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("eventscli") : undefined;

/** Runs the command in-process; its exit status and what it wrote. */
async function run(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runEventsCommand(
    args,
    {},
    {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
    },
  );
  return { code, stdout, stderr };
}

describe("partner-yield events", () => {
  test("--help lists the commands and the exit statuses; bad command lines exit 2", async () => {
    const help = await run(["--help"]);
    assert.equal(help.code, 0);
    for (const text of [
      "tail [--follow]",
      "consumers list",
      "consumers reset NAME --to ID",
      "prune --older-than DAYS",
      "Exit status",
    ])
      assert.ok(help.stdout.includes(text), text);
    assert.match(helpText(), /partner-yield events COMMAND/);
    const url = ["--database-url", "postgres://x@127.0.0.1:1/y"];
    for (const [args, message] of [
      [[], /missing command/],
      [["drop", ...url], /unknown command "drop"/],
      [["tail", "--to", "3", ...url], /--to does not apply to tail/],
      [["tail", "--env", "staging", ...url], /--env must be sandbox or production/],
      [["consumers", "reset", "ledger", ...url], /needs --to ID/],
      [["consumers", "reset", "Ledger!", "--to", "1", ...url], /consumer name "Ledger!"/],
      [["consumers", "reset", "ledger", "--to=-1", ...url], /--to must be an event id/],
      [["consumers", "drop", ...url], /consumers takes list or reset/],
      [["prune", ...url], /needs --older-than DAYS/],
      [["prune", "--older-than", "7", ...url], /at least 30/],
      [["tail"], /give --database-url URL or set DATABASE_URL/],
      [["tail", "--nope", ...url], /Unknown option/],
    ] as const) {
      const result = await run(args);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
  });

  test("tail --follow prints an event after its 200; consumers list, reset; prune keeps the window", async () => {
    // The sandbox's data in memory, its events in the test database (which checks the key with the
    // insert, so it holds the fixtures too).
    await importData(db!.pool, dataSetOf(loadFixtureDir(DEFAULT_FIXTURES_DIR)));
    const server = await startTestServer({ events: new PostgresEventStore(db!.pool) });
    const tail = spawn(
      process.execPath,
      cliArgs(["events", "tail", "--follow", "--json", "--database-url", db!.url]),
      {
        cwd: fileURLToPath(new URL("../../../", import.meta.url)),
        env: cliEnv(),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let lines = "";
    let errors = "";
    tail.stdout.on("data", (d) => (lines += d));
    tail.stderr.on("data", (d) => (errors += d));
    const exited = new Promise<number | null>((resolve) => tail.on("close", resolve));
    try {
      // Tail is following once its listener is up: wait for the listening connection.
      for (let i = 0; i < 200; i++) {
        const listening = await db!.pool.query(
          "select 1 from pg_stat_activity where application_name = 'partner-yield-events' and datname = current_database()",
        );
        if (listening.rowCount! > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const body = eventBody();
      const response = await fetch(`${server.url}${INBOUND}`, {
        method: "POST",
        headers: eventHeaders(body, `tail-${crypto.randomUUID()}`),
        body,
      });
      assert.equal(response.status, 200);
      const { event_id } = (await response.json()) as { event_id: number };
      for (let i = 0; i < 200 && !lines.includes(`"id":${event_id},`); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const printed = lines
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { id: number; event_type: string });
      assert.deepEqual(
        printed.map((e) => [e.id, e.event_type]),
        [[event_id, "partner.user.created"]],
        errors,
      );

      const consumers = new PostgresEventConsumers(db!.pool, { connection: false });
      await consumers.poll({ consumer: "ledger" });
      await consumers.close();
      const listed = await run(["consumers", "list", "--database-url", db!.url]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /ledger\s+0\s+1\s+[\d.]+\s+never/);
      const reset = await run([
        "consumers",
        "reset",
        "ledger",
        "--to",
        String(event_id),
        "--database-url",
        db!.url,
      ]);
      assert.equal(reset.code, 0, reset.stderr);
      const json = await run(["consumers", "list", "--json", "--database-url", db!.url]);
      const state = (
        JSON.parse(json.stdout) as { consumers: { name: string; position: number; lag_events: number }[] }
      ).consumers[0]!;
      assert.deepEqual([state.name, state.position, state.lag_events], ["ledger", event_id, 0]);
      const missing = await run([
        "consumers",
        "reset",
        "ledger",
        "--to",
        String(event_id + 1000),
        "--database-url",
        db!.url,
      ]);
      assert.equal(missing.code, 4);
      assert.match(missing.stderr, /no event/);
      const pruned = await run(["prune", "--older-than", "30", "--database-url", db!.url]);
      assert.equal(pruned.code, 0, pruned.stderr);
      assert.match(pruned.stdout, /deleted 0 event\(s\)/);
      const last = await run(["tail", "--last", "1", "--database-url", db!.url]);
      assert.match(
        last.stdout,
        new RegExp(`^\\s*${event_id}\\s+\\S+\\s+\\S+\\s+sandbox\\s+partner\\.user\\.created`),
      );
    } finally {
      tail.kill("SIGTERM");
      assert.equal(await exited, 0, errors);
      await server.close();
    }
  });
});
