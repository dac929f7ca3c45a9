/**
 * The command line as QA uses it: help on every command, usage errors exit 2, `run` as the
 * default command, a run against a base URL with credentials from the environment, exit codes
 * 0 / 1 / 2, and every command it prints runnable as printed.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import type { EmbeddedTarget } from "../src/embedded.js";
import { FAULTS } from "../src/faults/faults.js";
import { main } from "../src/main.js";
import { VERSION } from "../src/version.js";
import { captureIo } from "./support/io.js";
import { startTarget } from "./support/targets.js";

describe("help and usage errors", () => {
  test("--help on every command exits 0 and documents it", async () => {
    for (const [args, pattern] of [
      [["--help"], /Usage:[\s\S]*\[run\] \[options\]/],
      [["run", "--help"], /--base-url URL[\s\S]*--rate-limit-probe[\s\S]*Exit codes/],
      [["list", "--help"], /Usage: partner-yield-conformance list/],
      [["properties", "--help"], /--path P[\s\S]*--base-url URL[\s\S]*--max-requests N/],
    ] as const) {
      const { out, io } = captureIo();
      assert.equal(await main([...args], io), 0, args.join(" "));
      assert.match(out.stdout, pattern);
    }
  });

  test("--version prints the package version", async () => {
    const { out, io } = captureIo();
    assert.equal(await main(["--version"], io), 0);
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    assert.equal(out.stdout.trim(), pkg.version);
    assert.equal(VERSION, pkg.version);
  });

  test("bad commands, flags and values exit 2 with a message", async () => {
    for (const args of [
      ["frobnicate"],
      ["--nope"],
      ["run", "--nope"],
      ["run", "--level", "strict"],
      ["--rpm", "fast"],
      ["run", "--only", "EVT-99"],
      ["run", "--base-url", "not a url"],
      ["run", "--wallet", "0x123"],
      ["run", "--api-key", "ypk_test_x"],
      ["list", "--level", "x"],
      ["properties", "--wallet", "0x123"],
    ]) {
      const { out, io } = captureIo();
      assert.equal(await main(args, io), 2, args.join(" "));
      assert.match(out.stderr, /^partner-yield-conformance: /, args.join(" "));
    }
  });

  test("a negative number after a flag says how to pass it", async () => {
    for (const [args, flag] of [
      [["run", "--seed", "-3"], "--seed=-3"],
      [["properties", "--runs", "-5"], "--runs=-5"],
    ] as const) {
      const { out, io } = captureIo();
      assert.equal(await main([...args], io), 2);
      assert.ok(out.stderr.includes(flag), out.stderr);
      assert.doesNotMatch(out.stderr, /ambiguous/);
    }
  });

  test("a base URL without an API key is a configuration error", async () => {
    const { out, io } = captureIo();
    assert.equal(await main(["--base-url", "http://127.0.0.1:1"], io), 2);
    assert.match(out.stderr, /PARTNER_API_KEY/);
  });

  test("an unreachable target exits 2", async () => {
    const { out, io } = captureIo({ PARTNER_API_KEY: "ypk_test_x" });
    assert.equal(await main(["run", "--base-url", "http://127.0.0.1:1", "--only", "AUTH-01"], io), 2);
    assert.match(out.stderr, /unreachable/);
  });
});

describe("list", () => {
  test("prints every check with its kind, level, cost and source; --json adds the lines each enforces", async () => {
    const { out, io } = captureIo();
    assert.equal(await main(["list"], io), 0);
    assert.match(out.stdout, /^EVT-03 +scenario +reference +2 +CONTRACT §5/m);
    assert.match(out.stdout, /^ERR-05 +response +spec /m);
    assert.match(out.stdout, /signing preflight included/);
    const json = captureIo();
    assert.equal(await main(["list", "--json", "--level", "spec"], json.io), 0);
    const rows = JSON.parse(json.out.stdout) as Array<{ level: string; enforces: Array<{ quote: string }> }>;
    assert.ok(rows.length > 20 && rows.every((r) => r.level === "spec" && r.enforces.length > 0));
  });

  test("aligns every column, RL-03's too", async () => {
    const { out, io } = captureIo();
    assert.equal(await main(["list"], io), 0);
    const rows = out.stdout
      .split("\n")
      .filter((line) => /^[A-Z]+-[0-9]{2} /.test(line) || line.startsWith("ID "));
    const sourceAt = (line: string) => line.search(/ (CONTRACT|interface\.md|source|docs\/)/);
    const costEnd = (line: string) => line.slice(0, sourceAt(line)).trimEnd().length;
    assert.equal(new Set(rows.map(sourceAt)).size, 1, "the source column starts at one offset");
    assert.equal(new Set(rows.map(costEnd)).size, 1, "the cost column ends at one offset");
    assert.ok(rows.some((r) => r.startsWith("RL-03")));
  });

  test("`pnpm conformance list` works: the root script names no subcommand, run is the default", () => {
    const root = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      scripts: Record<string, string>;
    };
    assert.match(root.scripts["conformance"]!, /tsx harness\/src\/cli\.ts$/);
    assert.match(root.scripts["properties"]!, /tsx harness\/src\/cli\.ts properties$/);
  });
});

describe("run against a base URL", () => {
  let clean: EmbeddedTarget;
  let faulty: EmbeddedTarget;
  before(async () => {
    clean = await startTarget();
    faulty = await startTarget(FAULTS.find((f) => f.id === "duplicate-creates-new-event"));
  });
  after(async () => {
    await clean.close();
    await faulty.close();
  });

  const env = (t: EmbeddedTarget) => ({
    PARTNER_API_KEY: t.apiKey,
    PARTNER_SIGNING_SECRET: t.signingSecret,
    PARTNER_OTHER_ENV_API_KEY: t.otherEnvApiKey,
  });

  test("without a command it runs: a conforming target exits 0 and says what it spent", async () => {
    const { out, io } = captureIo(env(clean));
    const args = ["--base-url", clean.baseUrl, "--seed", "99", "--rpm", "6000", "--only", "AUTH,PRD,EVT-01"];
    assert.equal(await main(args, io), 0, out.stdout);
    assert.match(out.stdout, /seed 99/);
    assert.match(out.stdout, /requests spent/);
    assert.match(out.stdout, /signing secret is checked first/);
    assert.doesNotMatch(out.stdout, /✖/);
  });

  test("a failing target exits 1, prints evidence and a rerun line that runs as printed, and never a secret", async () => {
    const { out, io } = captureIo(env(faulty));
    const code = await main(
      ["run", "--base-url", faulty.baseUrl, "--seed", "5", "--only", "EVT", "--rpm", "6000"],
      io,
    );
    assert.equal(code, 1);
    assert.match(out.stdout, /✖ EVT-02 .*\[state\]/);
    assert.match(out.stdout, /reproduce:/);
    const rerun = /rerun the checks that failed or warned: (.*)$/m.exec(out.stdout)?.[1];
    assert.ok(rerun !== undefined, out.stdout);
    assert.match(
      rerun,
      new RegExp(
        `^pnpm conformance run --seed 5 --only [A-Z0-9,-]*EVT-02[A-Z0-9,-]* --base-url ${faulty.baseUrl.replaceAll(".", "\\.")} --rpm 6000$`,
      ),
    );
    // The printed line, run as printed (minus its prefix), replays the failure.
    const again = captureIo(env(faulty));
    assert.equal(await main(rerun.replace(/^pnpm conformance /, "").split(" "), again.io), 1);
    assert.match(again.out.stdout, /✖ EVT-02 /);
    for (const secret of Object.values(env(faulty)))
      assert.ok(!out.stdout.includes(secret) && !out.stderr.includes(secret));
  });

  test("--max-requests refuses a plan that could exceed it (exit 2, no request sent); a probe plan mentions --probe-budget", async () => {
    const { out, io } = captureIo(env(clean));
    assert.equal(await main(["run", "--base-url", clean.baseUrl, "--max-requests", "10"], io), 2);
    assert.match(out.stderr, /more than --max-requests 10/);
    const probe = captureIo(env(clean));
    assert.equal(
      await main(
        ["run", "--base-url", clean.baseUrl, "--rate-limit-probe", "--max-requests", "50"],
        probe.io,
      ),
      2,
    );
    assert.match(probe.out.stderr, /--probe-budget/);
  });

  test("a refused API key is a configuration error (exit 2) naming where the key came from", async () => {
    const args = ["run", "--base-url", clean.baseUrl, "--only", "PRD-01"];
    const flag = captureIo();
    assert.equal(await main([...args, "--api-key", "ypk_test_wrong"], flag.io), 2);
    assert.match(flag.out.stderr, /refused the API key.*check the key passed with --api-key/);
    const fromEnv = captureIo({ PARTNER_API_KEY: "ypk_test_wrong" });
    assert.equal(await main(args, fromEnv.io), 2);
    assert.match(fromEnv.out.stderr, /check PARTNER_API_KEY/);
  });

  test("a base URL whose path holds no API is a configuration error at the first request", async () => {
    const { out, io } = captureIo(env(clean));
    const code = await main(["run", "--base-url", `${clean.baseUrl}/foo/`, "--level", "spec"], io);
    assert.equal(code, 2, out.stdout);
    assert.match(
      out.stderr,
      /\/foo\/products answered 404[^:]*: the API is not there\. --base-url is where the API is mounted.*--base-path/,
    );
  });

  test("a base URL that names the API's path itself runs (the path of --base-url is where the API is)", async () => {
    const { out, io } = captureIo(env(clean));
    const args = ["run", "--base-url", `${clean.baseUrl}/api/partner`, "--only", "PRD-01", "--rpm", "6000"];
    assert.equal(await main(args, io), 0, out.stdout + out.stderr);
    assert.match(out.stdout, /1 passed, 0 failed/);
  });

  test("checks whose inputs are absent are skipped (○), not passed; --fail-on-skip makes that exit 1", async () => {
    const args = [
      "run",
      "--base-url",
      clean.baseUrl,
      "--only",
      "EVT-01,AUTH-03,PRD-07,POS-06",
      "--rpm",
      "6000",
    ];
    const plain = captureIo({ PARTNER_API_KEY: clean.apiKey });
    assert.equal(await main(args, plain.io), 0);
    for (const id of ["EVT-01", "AUTH-03", "PRD-07", "POS-06"])
      assert.match(plain.out.stdout, new RegExp(`^○ ${id} .*skipped`, "m"));
    assert.match(plain.out.stdout, /0 passed, 0 failed, 0 warnings, 4 skipped/);
    const strict = captureIo({ PARTNER_API_KEY: clean.apiKey });
    assert.equal(await main([...args, "--fail-on-skip"], strict.io), 1);
    assert.match(strict.out.stdout, /--fail-on-skip: 4 check\(s\) skipped/);
  });
});

describe("run without --base-url (the embedded demonstration)", () => {
  test("starts the embedded server with the demo credentials and passes every check", async () => {
    const { out, io } = captureIo();
    const code = await main(["--seed", "3", "--rate-limit-probe"], io);
    assert.equal(code, 0, out.stdout);
    assert.match(out.stdout, /embedded sandbox server/);
    assert.match(out.stdout, / passed, 0 failed, 0 warnings, 0 skipped/);
  });
});
