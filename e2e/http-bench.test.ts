/**
 * `pnpm bench:http` runs (one short round) and prints its table, with the `--calibrate` rows (the
 * bare server with busy work before each answer) and the `--batched-bare` row. Its figures are measurements, not checked here:
 * only that every server answered every request and each row is printed. The full runs:
 * docs/performance.md. The PostgreSQL scenarios and `pnpm bench:propagation` are checked here only
 * for their flags: their shortest run (a database migrated and filled by the built CLI, four
 * contenders warmed and loaded) takes well over the few seconds a test of the suite may; the pgbench
 * yardsticks of those runs are checked for the settings their sessions run with (the insert
 * without the flush wait; our event row, one a transaction, stored as the event store stores it),
 * and the durable bare server of `--durable-bare` on its own (no answer before its body's commit).
 * `profile-summary.ts` (a `--profile` run's summary) is checked on a profile made here, and
 * `--perf-map` on a short run (the map written and named, no V8 log left behind).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { machineCpuOf, machineCpuSince } from "../bench/http/machine-cpu.js";
import {
  eventInsert,
  eventInsertsStored,
  findPgbench,
  insertWithoutFlush,
  PGBENCH_INSTALL_HINT,
  runPgbench,
  singleInsert,
} from "../bench/http/pgbench.js";
import { findWrk, WRK_INSTALL_HINT } from "../bench/http/wrk.js";
import { PG_MODULE } from "../bench/pg-database.js";
import { DEMO_CREDENTIALS } from "../packages/core/src/demo/index.js";
import { gate, loadSandbox } from "../packages/node-adapter/src/testing/index.js";
import { dataSetOf, importData } from "../packages/store-postgres/src/index.js";
import { postgresReachable, testDatabase } from "../packages/store-postgres/src/testing/index.js";
import { exited, ROOT, runBench } from "./support/processes.js";

/** Runs `bench/http/run.ts` with `args` (it builds the server first: up to 2 minutes). */
function runHttpBench(args: string[]) {
  return runBench("bench/http/run.ts", args, 120_000);
}

/** The flags of the shortest table run: one round of 1 s after 1 s of warm-up, 4 connections. */
const SHORT_ROUND = ["--rounds", "1", "--duration", "1", "--warmup", "1", "--connections", "4"];

let healthzRun: ReturnType<typeof runHttpBench> | undefined;

/**
 * One short round of /healthz with `--calibrate 5,50 --batched-bare` and, on Linux (where V8 writes
 * perf maps), `--perf-map`: run once, for the tests of its table and of its perf map (five servers
 * start in it, the longest part of a short run).
 */
function shortHealthzRun(): ReturnType<typeof runHttpBench> {
  healthzRun ??= runHttpBench([
    "--scenarios",
    "healthz",
    ...SHORT_ROUND,
    "--calibrate",
    "5,50",
    "--batched-bare",
    ...(process.platform === "linux" ? ["--perf-map"] : []),
    "--port-base",
    "23400",
  ]);
  return healthzRun;
}

// The perf map it wrote, also when its test is left out (--test-name-pattern).
after(async () => {
  const said = healthzRun === undefined ? null : /\/tmp\/perf-\d+\.map/.exec((await healthzRun).stderr);
  if (said !== null) rmSync(said[0], { force: true });
});

/** Runs `bench/propagation.ts` with `args` (flags only here: it stops before any build). */
function runPropagation(args: string[]) {
  return runBench("bench/propagation.ts", args, 60_000);
}

/** The first table's row of `server` for `scenario`, as its cells. */
function row(stdout: string, scenario: string, server: string): string[] | undefined {
  return rows(stdout, scenario, server)[0];
}

/** Every table's rows of `server` for `scenario`, in the order printed. */
function rows(stdout: string, scenario: string, server: string): string[][] {
  return stdout
    .split("\n")
    .map((line) => line.split("|").map((cell) => cell.trim()))
    .filter((cells) => cells[1] === scenario && cells[2] === server);
}

describe("bench:http", () => {
  test("--help lists --calibrate and --batched-bare; a bad value or a run it does not go with is a usage error", async () => {
    const help = await runHttpBench(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--calibrate a,b/);
    const zero = await runHttpBench(["--calibrate", "0"]);
    assert.equal(zero.code, 2);
    assert.equal(
      zero.stderr,
      'bench:http: --calibrate must be an integer from 1 to 100000 (got "0"); see --help\n',
    );
    const withRss = await runHttpBench(["--calibrate", "5", "--rss"]);
    assert.equal(withRss.code, 2);
    assert.equal(
      withRss.stderr,
      "bench:http: --calibrate adds rows to the table: it does not go with --rss or --scaling; see --help\n",
    );
    assert.match(help.stdout, /--batched-bare/);
    const batchedRss = await runHttpBench(["--batched-bare", "--scaling", "products"]);
    assert.equal(batchedRss.code, 2);
    assert.equal(
      batchedRss.stderr,
      "bench:http: --batched-bare adds a row to the table: it does not go with --rss or --scaling; see --help\n",
    );
  });

  test("--help lists the PostgreSQL scenarios, `pg` and --pgbench-clients; -pg with -nolog or 0 clients is a usage error", async () => {
    const help = await runHttpBench(["--help"]);
    assert.equal(help.code, 0);
    for (const name of ["product-pg", "yield-calc-pg", "position-pg", "post-pg"]) {
      assert.ok(help.stdout.includes(name), `--help names ${name}`);
    }
    assert.match(help.stdout, /"pg" stands for the four/);
    assert.match(help.stdout, /--pgbench-clients n/);
    const both = await runHttpBench(["--scenarios", "product-pg-nolog"]);
    assert.equal(both.code, 2);
    assert.equal(both.stderr, 'bench:http: unknown scenario "product-pg-nolog" in --scenarios; see --help\n');
    const healthz = await runHttpBench(["--scenarios", "healthz-pg"]);
    assert.equal(healthz.code, 2);
    assert.equal(healthz.stderr, 'bench:http: unknown scenario "healthz-pg" in --scenarios; see --help\n');
    const clients = await runHttpBench(["--pgbench-clients", "0"]);
    assert.equal(clients.code, 2);
    assert.equal(
      clients.stderr,
      'bench:http: --pgbench-clients must be an integer from 1 to 10000000 (got "0"); see --help\n',
    );
  });

  test("one short round of /healthz with two calibration rows and the batched bare server: every server answers, every row printed", async () => {
    const run = await shortHealthzRun();
    assert.equal(run.code, 0, run.stderr);
    for (const server of [
      "bare node:http",
      "partner-yield",
      "bare node:http + 5 µs work",
      "bare node:http + 50 µs work",
      "bare node:http, batched",
    ]) {
      const cells = row(run.stdout, "healthz", server);
      assert.ok(cells !== undefined, `a row for ${server}:\n${run.stdout}`);
      assert.ok(Number(cells[3]) > 0, `${server} answered requests: ${cells.join(" | ")}`);
      assert.equal(cells.at(-2), "0", `${server}: no non-2xx answer or error`);
      // The machine table: | scenario | server | req/s | loader µs/req | machine µs/req | busy % | stolen % |
      const machine = rows(run.stdout, "healthz", server).find((r) => r.length === 9);
      assert.ok(machine !== undefined, `a machine row for ${server}:\n${run.stdout}`);
      const [loader, machineCpu, busy, stolen] = machine.slice(4, 8).map(Number) as [
        number,
        number,
        number,
        number,
      ];
      if (machine[5] === "–") {
        // No /proc/stat (not Linux): said so, and the load generator's CPU still measured.
        assert.match(run.stdout, /not measured: \/proc\/stat cannot be read/);
        assert.ok(loader > 0, `${server}: the load generator's CPU a request: ${machine.join(" | ")}`);
        continue;
      }
      assert.ok(loader > 0, `${server}: the load generator's CPU a request: ${machine.join(" | ")}`);
      assert.ok(
        machineCpu >= loader,
        `${server}: the machine's CPU holds the load generator's: ${machine.join(" | ")}`,
      );
      assert.ok(busy > 0 && busy <= 100, `${server}: busy share of the cores: ${machine.join(" | ")}`);
      assert.ok(
        stolen >= 0 && stolen <= busy,
        `${server}: the stolen share is part of the busy one: ${machine.join(" | ")}`,
      );
    }
    assert.match(
      run.stdout,
      /\| scenario \| server \| req\/s \| load generator CPU µs\/req \| machine CPU µs\/req \| machine busy % \| of which stolen % \|/,
    );
  });
});

describe("bench:http's machine table", () => {
  test("busy, the cores' share and the stolen share come from /proc/stat's fields; another line is refused", () => {
    // user nice system idle iowait irq softirq steal guest guest_nice, ticks of 10 ms.
    const before = machineCpuOf("cpu  100 0 50 800 50 0 20 30 7 0", 10_000);
    assert.deepEqual(before, { busy: 2_000_000, all: 10_500_000, steal: 300_000 });
    // 200 ticks later: 60 user, 20 system, 10 softirq, 30 steal (busy 120), 70 idle, 10 iowait.
    const after = machineCpuOf("cpu  160 0 70 870 60 0 30 60 7 0", 10_000);
    const spent = machineCpuSince(before, after);
    assert.equal(spent.busy, 1_200_000);
    assert.equal(spent.share, 120 / 200);
    assert.equal(spent.stolen, 30 / 200);
    assert.throws(() => machineCpuOf("cpu0 1 2 3 4 5 6 7 8", 10_000), /unexpected \/proc\/stat line/);
    assert.throws(() => machineCpuOf("cpu  1 2 3", 10_000), /unexpected \/proc\/stat line/);
  });
});

describe("bench:http --perf-map", () => {
  test("our server's pid and perf map are printed; the map names the server's own functions; no V8 log is left behind", async (t) => {
    if (process.platform !== "linux") {
      t.skip("V8 writes perf maps on Linux only");
      return;
    }
    const run = await shortHealthzRun();
    assert.equal(run.code, 0, run.stderr);
    const said = /^perf map: ours-healthz is pid (\d+) \(\/tmp\/perf-(\d+)\.map\)$/m.exec(run.stderr);
    assert.ok(said !== null, `the pid and its map on stderr:\n${run.stderr}`);
    assert.equal(said[1], said[2]);
    const map = `/tmp/perf-${said[1]}.map`;
    try {
      assert.ok(existsSync(map), `${map} written`);
      // Lines of "address size name"; the server's own code among the names.
      const text = readFileSync(map, "utf8");
      assert.match(text, /^[0-9a-f]+ [0-9a-f]+ .*packages\/node-adapter\/dist\//m);
      assert.deepEqual(
        readdirSync(ROOT).filter((f) => f.startsWith("isolate-") && f.includes(`-${said[1]}-`)),
        [],
        "no isolate-…-v8.log in the working directory",
      );
      // The table is unchanged by it: the server's row is there, with no error.
      const cells = row(run.stdout, "healthz", "partner-yield");
      assert.ok(cells !== undefined && cells.at(-2) === "0", run.stdout);
    } finally {
      rmSync(map, { force: true });
    }
  });
});

describe("bench:http --loader", () => {
  test("a loader other than autocannon or wrk, or wrk with pipelining, is a usage error; wrk missing is said with how to install it", async () => {
    const bad = await runHttpBench(["--loader", "ab"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'bench:http: --loader must be autocannon or wrk (got "ab"); see --help\n');
    const piped = await runHttpBench(["--loader", "wrk", "--pipelining", "2"]);
    assert.equal(piped.code, 2);
    assert.equal(
      piped.stderr,
      "bench:http: --pipelining is autocannon's: it does not go with --loader wrk; see --help\n",
    );
    const missing = await runBench("bench/http/run.ts", ["--loader", "wrk"], 60_000, {
      WRK: "/nonexistent/wrk",
    });
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, `bench:http: --loader wrk: wrk not found. ${WRK_INSTALL_HINT}\n`);
    assert.equal(missing.stdout, "");
  });

  test("one short round of the signed POST in memory with wrk: every server answers every request with a 2xx, wrk's CPU counted", async (t) => {
    if (findWrk() === undefined) {
      if (process.env["CI"] === "true") assert.fail(`wrk is missing under CI: ${WRK_INSTALL_HINT}`);
      t.skip(`SKIPPED: wrk not found; install it to run this test (${WRK_INSTALL_HINT})`);
      return;
    }
    const run = await runHttpBench([
      "--scenarios",
      "post",
      "--loader",
      "wrk",
      ...SHORT_ROUND,
      "--port-base",
      "23500",
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /wrk \([^)]+\) 4 connections, [12] threads/);
    for (const server of ["bare node:http", "partner-yield"]) {
      const cells = row(run.stdout, "post", server);
      assert.ok(cells !== undefined, `a row for ${server}:\n${run.stdout}`);
      assert.ok(Number(cells[3]) > 0, `${server} answered: ${cells.join(" | ")}`);
      assert.equal(cells.at(-2), "0", `${server}: no status >= 400 or error`);
      // The machine table: | scenario | server | req/s | loader µs/req | machine µs/req | busy % | stolen % |
      const machine = rows(run.stdout, "post", server).find((r) => r.length === 9);
      assert.ok(machine !== undefined, `a machine row for ${server}:\n${run.stdout}`);
      // wrk's own CPU (a child's: its syscalls alone are several µs a request) is in the column;
      // the bench process, idle while wrk runs, adds well under 1 µs a request.
      assert.ok(Number(machine[4]) >= 3, `${server}: wrk's CPU a request: ${machine.join(" | ")}`);
    }
  });
});

describe("bench:propagation", () => {
  test("--help says what is timed and the flags; a bad flag value is a usage error before anything starts", async () => {
    const help = await runPropagation(["--help"]);
    assert.equal(help.code, 0);
    for (const flag of [
      "--changes n",
      "--via admin|cli",
      "--timeout-ms n",
      "--max-seconds n",
      "--port-base n",
    ]) {
      assert.ok(help.stdout.includes(flag), `--help lists ${flag}`);
    }
    assert.match(help.stdout, /p99 <= 100 ms/);
    const via = await runPropagation(["--via", "http"]);
    assert.equal(via.code, 2);
    assert.equal(via.stderr, 'bench:propagation: --via must be admin or cli (got "http"); see --help\n');
    const changes = await runPropagation(["--changes", "10001"]);
    assert.equal(changes.code, 2);
    assert.equal(
      changes.stderr,
      'bench:propagation: --changes must be an integer from 1 to 10000 (got "10001"); see --help\n',
    );
  });
});

describe("profile-summary.ts", () => {
  test("--help, a bad top or a file that is not a profile say so; a profile gives its busiest functions, self and inclusive", async () => {
    const run = (args: string[]) => runBench("bench/http/profile-summary.ts", args, 60_000);
    const help = await run(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: profile-summary\.ts file\.cpuprofile \[top\]/);
    const badTop = await run(["x.cpuprofile", "0"]);
    assert.equal(badTop.code, 2);
    assert.match(badTop.stderr, /top must be a positive integer, not "0"/);
    const notProfile = await run(["package.json"]);
    assert.equal(notProfile.code, 1);
    assert.match(notProfile.stderr, /package\.json is not a V8 CPU profile/);
    const missing = await run(["/nonexistent.cpuprofile"]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read \/nonexistent\.cpuprofile/);

    // root → work (self 3 ms) → leaf (self 1 ms); idle 4 ms.
    const dir = mkdtempSync(join(tmpdir(), "profile-summary-"));
    const file = join(dir, "p.cpuprofile");
    const frame = (functionName: string) => ({ functionName, url: "", lineNumber: 0 });
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [
          { id: 1, callFrame: frame("(root)"), children: [2, 4] },
          { id: 2, callFrame: frame("work"), children: [3] },
          { id: 3, callFrame: frame("leaf") },
          { id: 4, callFrame: frame("(idle)") },
        ],
        samples: [2, 2, 2, 3, 4, 4, 4, 4],
        timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
      }),
    );
    const summary = await run([file, "2"]);
    rmSync(dir, { recursive: true });
    assert.equal(summary.code, 0, summary.stderr);
    const lines = summary.stdout.split("\n");
    assert.equal(lines[0], "8 ms sampled");
    assert.deepEqual(lines.slice(1, 3), [" 50.0%  (idle)", " 37.5%  work"]);
    assert.ok(lines.includes("100.0%  work :1"), summary.stdout);
    assert.ok(lines.includes(" 25.0%  leaf :1"), summary.stdout);
    assert.ok(!lines.some((line) => /\((root|idle)\) :/.test(line)), summary.stdout);
    for (const content of ["null", JSON.stringify({ nodes: [], samples: [], timeDeltas: [] })]) {
      const notProfile = join(tmpdir(), `profile-summary-${process.pid}.cpuprofile`);
      writeFileSync(notProfile, content);
      const result = await run([notProfile]);
      rmSync(notProfile);
      assert.equal(result.code, 1, `${content}: ${result.stderr}`);
      assert.match(result.stderr, /is not a V8 CPU profile/);
    }
  });
});

describe("bench:pg-client", () => {
  const run = (args: string[]) => runBench("bench/pg-client.ts", args, 120_000);

  test("--help says what is measured and how to install the other clients; a bad flag value is a usage error", async () => {
    const help = await run(["--help"]);
    assert.equal(help.code, 0);
    for (const flag of ["--module-dir dir", "--rounds n", "--lookups n", "--batches n", "--batch n"]) {
      assert.ok(help.stdout.includes(flag), `--help lists ${flag}`);
    }
    assert.match(help.stdout, /npm install pg@8 postgres@3 pg-native@3/);
    const rounds = await run(["--rounds", "0"]);
    assert.equal(rounds.code, 2);
    assert.equal(
      rounds.stderr,
      'bench:pg-client: --rounds must be an integer from 1 to 50 (got "0"); see --help\n',
    );
  });

  test("a short run prints pg's row (the other clients left out with a notice when not installed)", async (t) => {
    const result = await run(["--rounds", "1", "--lookups", "200", "--batches", "10", "--batch", "3"]);
    if (result.code === 2 && /PostgreSQL is not reachable/.test(result.stderr)) {
      if (process.env["CI"] === "true") assert.fail(`PostgreSQL is down under CI: ${result.stderr}`);
      t.skip(`SKIPPED: PostgreSQL is not reachable; start it to run this test (${result.stderr.trim()})`);
      return;
    }
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /postgres and pg-native: left out \(no --module-dir; see --help\)/);
    const pgRow = result.stdout.split("\n").find((line) => line.startsWith("| pg (JavaScript) |"));
    assert.ok(pgRow, result.stdout);
    const cells = pgRow
      .split("|")
      .slice(2, -1)
      .map((cell) => Number(cell.trim()));
    assert.equal(cells.length, 6);
    for (const [i, cell] of cells.entries()) {
      if (i === 2 || i === 5) continue; // PostgreSQL's CPU: "–" where /proc cannot be read
      assert.ok(cell > 0, `cell ${i} of ${pgRow} is a positive figure`);
    }
  });
});

const pgbench = findPgbench();
const yardstickServices = gate({
  PostgreSQL: await postgresReachable(),
  pgbench: pgbench === undefined ? `not installed: ${PGBENCH_INSTALL_HINT}` : undefined,
});

yardstickServices.describe("bench:http's pgbench yardsticks", () => {
  yardstickServices.test(
    "the insert without the flush wait is the durable insert's statement, run in sessions with synchronous_commit off",
    async () => {
      const bin = pgbench!;
      const durable = singleInsert(2);
      const noFlush = insertWithoutFlush(2);
      assert.equal(noFlush.script, durable.script);
      assert.equal(noFlush.setup, durable.setup);
      assert.notEqual(noFlush.label, durable.label);

      const database = await testDatabase("pgbench_yardsticks", { migrated: false });
      await database.pool.query("create table seen (workload text not null, setting text not null)");
      const serverSetting = (
        await database.pool.query<{ s: string }>("select current_setting('synchronous_commit') as s")
      ).rows[0]!.s;
      // Each workload's sessions, recording the setting they ran with instead of the insert.
      for (const workload of [durable, noFlush]) {
        const probe = {
          ...workload,
          script: `insert into seen (workload, setting) values ('${workload.name}', current_setting('synchronous_commit'));\n`,
        };
        const result = await runPgbench(bin, database.url, probe, 2, 1);
        assert.ok(result.total > 0 && result.tps > 0, `${workload.name}: ${JSON.stringify(result)}`);
        assert.equal(result.failed, 0);
      }
      const settings = await database.pool.query<{ workload: string; setting: string }>(
        "select distinct workload, setting from seen order by workload",
      );
      assert.deepEqual(settings.rows, [
        { workload: "insert", setting: serverSetting },
        { workload: "insert-no-flush", setting: "off" },
      ]);
      assert.notEqual(serverSetting, "off", "the test database commits durably, as the bench's does");
    },
  );

  yardstickServices.test(
    "our event row, one a transaction: every transaction stores the body as the event store does, with its data as jsonb; without the demo's credentials nothing is stored",
    async () => {
      const body = JSON.stringify({
        event_type: "partner.user.created",
        occurred_at: "2026-11-20T10:15:00Z",
        data: { amount: 1.1, note: 'a "quoted", comma\'d é', nested: { n: [1, 2] } },
      });
      const workload = eventInsert(2, body, DEMO_CREDENTIALS);
      const database = await testDatabase("pgbench_event_row");
      // Before the fixtures: the key and the secret are unknown, each call is refused.
      const refused = await runPgbench(pgbench!, database.url, workload, 2, 1);
      assert.ok(refused.total > 0 && refused.failed === 0, JSON.stringify(refused));
      assert.equal((await database.pool.query("select 1 from events")).rowCount, 0);
      assert.equal(await eventInsertsStored(database.url), 0, "the bench's check sees a refused run");

      await importData(database.pool, dataSetOf(loadSandbox()));
      const result = await runPgbench(pgbench!, database.url, workload, 2, 1);
      assert.ok(result.total > 0 && result.failed === 0, JSON.stringify(result));
      const rows = await database.pool.query<{ n: number; same: boolean; keys: number }>(
        `select count(*)::int as n, count(distinct idempotency_key)::int as keys,
           bool_and(partner_id = 'northwind' and environment = 'sandbox' and raw_body = $1
             and event_type = 'partner.user.created' and occurred_at = '2026-11-20T10:15:00Z'
             and data = ($1::jsonb -> 'data') and data::text = '{"note": "a \\"quoted\\", comma''d é", "amount": 1.1, "nested": {"n": [1, 2]}}'
             and idempotency_key like 'pgbench-%') as same
         from events`,
        [body],
      );
      // Every completed transaction stored its event (a repeated random key would be skipped).
      assert.ok(
        rows.rows[0]!.n >= result.total - 1 && rows.rows[0]!.n <= result.total,
        JSON.stringify(rows.rows),
      );
      assert.equal(rows.rows[0]!.keys, rows.rows[0]!.n);
      assert.equal(rows.rows[0]!.same, true);
      assert.equal(await eventInsertsStored(database.url), rows.rows[0]!.n);
    },
  );
});

describe("bench:http --durable-bare", () => {
  test("--help says what it runs; without post-pg, or with --rss, it is a usage error", async () => {
    const help = await runHttpBench(["--help"]);
    assert.equal(help.code, 0);
    assert.match(
      help.stdout,
      /--durable-bare\s+with post-pg: also run the bare server committing each POST's body/,
    );
    for (const [args, message] of [
      [
        ["--scenarios", "post", "--durable-bare"],
        /--durable-bare adds a row to post-pg's rounds: name post-pg/,
      ],
      [
        ["--scenarios", "post-pg", "--durable-bare", "--rss"],
        /--durable-bare adds a row to the table: it does not go with --rss/,
      ],
      [
        ["--scenarios", "post-pg", "--durable-bare", "--scaling", "events"],
        /it does not go with --rss or --scaling/,
      ],
    ] as const) {
      const result = await runHttpBench([...args]);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
  });
});

const durableServices = gate({ PostgreSQL: await postgresReachable() });

/** A port free on the loopback address a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

durableServices.describe("the durable bare server (bench:http --durable-bare)", () => {
  durableServices.test(
    "answers each POST with the captured answer only once its body is committed, and with a 503 when the insert fails",
    async () => {
      const database = await testDatabase("durable_bare", { migrated: false });
      const port = await freePort();
      const response = { status: 200, headers: { "content-type": "application/json" }, body: '{"ok":true}' };
      const spec = {
        port,
        response,
        readsBody: true,
        apiKey: "unused",
        durable: {
          databaseUrl: database.url,
          pgModule: PG_MODULE,
        },
      };
      const child = spawn(process.execPath, ["--import", "tsx", "bench/http/servers/bare.ts"], {
        cwd: ROOT,
        env: { ...process.env, NODE_OPTIONS: "", BENCH_SPEC: JSON.stringify(spec) },
        stdio: ["ignore", "ignore", "inherit"],
      });
      const url = `http://127.0.0.1:${port}`;
      try {
        for (let ready = false, tries = 0; !ready; tries++) {
          assert.ok(tries < 150 && child.exitCode === null, "the durable bare server did not start");
          ready = await fetch(`${url}/`).then(
            (r) => r.text().then(() => true),
            () => delay(200).then(() => false),
          );
        }
        const bodiesIn = async (bodies: readonly string[]) =>
          (
            await database.pool.query<{ n: number }>(
              "select count(*)::int as n from bench_bare_insert where body = any($1::text[])",
              [bodies],
            )
          ).rows[0]!.n;
        // 40 at once while the table is locked: every insert waits, so no POST may be answered
        // until the lock goes and its body is committed.
        const bodies = Array.from({ length: 40 }, (_, i) => JSON.stringify({ n: i, blob: '\u00e9"\\,{}' }));
        const lock = await database.pool.connect();
        await lock.query("begin");
        await lock.query("lock table bench_bare_insert in exclusive mode");
        const answers = bodies.map(async (body) => {
          const res = await fetch(`${url}/api/partner/webhooks/inbound`, { method: "POST", body });
          return { status: res.status, text: await res.text() };
        });
        const early = await Promise.race([
          Promise.any(answers).then(() => true),
          delay(500).then(() => false),
        ]);
        await lock.query("commit");
        lock.release();
        assert.equal(early, false, "a POST was answered while its insert waited for the table's lock");
        for (const answer of await Promise.all(answers)) {
          assert.deepEqual(answer, { status: 200, text: response.body });
        }
        assert.equal(await bodiesIn(bodies), 40);
        assert.equal((await database.pool.query("select 1 from bench_bare_insert")).rowCount, 40);
        // The insert fails (its table is gone): a 503, not an answer that claims the body is kept.
        await database.pool.query("drop table bench_bare_insert");
        const refused = await fetch(`${url}/api/partner/webhooks/inbound`, { method: "POST", body: "{}" });
        assert.equal(refused.status, 503);
        await refused.text();
      } finally {
        child.kill("SIGTERM");
        await exited(child);
      }
    },
  );
});
