/**
 * The command line as QA uses it: help on every command, usage errors exit 2, a run against a
 * base URL with credentials from the environment, reports written, exit codes 0 / 1 / 2.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { EmbeddedTarget } from "../src/embedded.js";
import { FAULTS } from "../src/faults/faults.js";
import { main } from "../src/main.js";
import { VERSION } from "../src/version.js";
import { captureIo } from "./support/io.js";
import { startTarget } from "./support/targets.js";
import { parseXml } from "./support/xml.js";

const dir = mkdtempSync(join(tmpdir(), "conformance-cli-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("help and usage errors", () => {
  test("--help on every command exits 0 and documents it", async () => {
    for (const [args, pattern] of [
      [["--help"], /Usage:/],
      [["run", "--help"], /--base-url URL[\s\S]*--rate-limit-probe[\s\S]*Exit codes/],
      [["list", "--help"], /Usage: partner-yield-conformance list/],
      [["properties", "--help"], /--path P/],
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
      [],
      ["frobnicate"],
      ["run", "--nope"],
      ["run", "--level", "strict"],
      ["run", "--rpm", "fast"],
      ["run", "--only", "EVT-99"],
      ["run", "--base-url", "not a url"],
      ["run", "--wallet", "0x123"],
      ["run", "--api-key", "ypk_test_x"],
      ["list", "--level", "x"],
    ]) {
      const { out, io } = captureIo();
      assert.equal(await main(args, io), 2, args.join(" "));
      if (args.length > 0) assert.match(out.stderr, /^partner-yield-conformance: /, args.join(" "));
    }
  });

  test("a base URL without an API key is a configuration error", async () => {
    const { out, io } = captureIo();
    assert.equal(await main(["run", "--base-url", "http://127.0.0.1:1"], io), 2);
    assert.match(out.stderr, /PARTNER_API_KEY/);
  });

  test("an unreachable target exits 2", async () => {
    const { out, io } = captureIo({ PARTNER_API_KEY: "ypk_test_x" });
    assert.equal(await main(["run", "--base-url", "http://127.0.0.1:1", "--only", "AUTH-01"], io), 2);
    assert.match(out.stderr, /unreachable/);
  });

  test("list prints every check with its level, cost and source", async () => {
    const { out, io } = captureIo();
    assert.equal(await main(["list"], io), 0);
    assert.match(out.stdout, /^EVT-03 +reference +2 +CONTRACT §5/m);
    const json = captureIo();
    assert.equal(await main(["list", "--json", "--level", "spec"], json.io), 0);
    const rows = JSON.parse(json.out.stdout) as Array<{ level: string }>;
    assert.ok(rows.length > 20 && rows.every((r) => r.level === "spec"));
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

  test("a conforming target exits 0 and the reports carry the seed", async () => {
    const junit = join(dir, "clean.xml");
    const json = join(dir, "clean.json");
    const { out, io } = captureIo(env(clean));
    const args = [
      "run",
      "--base-url",
      clean.baseUrl,
      "--seed",
      "99",
      "--rpm",
      "6000",
      "--foreign-slug",
      clean.foreignSlug!,
      "--wallet",
      clean.wallet,
    ];
    const code = await main([...args, "--junit", junit, "--json", json], io);
    assert.equal(code, 0, out.stdout);
    assert.match(out.stdout, /seed 99/);
    assert.match(out.stdout, /requests spent/);
    assert.doesNotMatch(out.stdout, /✖/);
    const root = parseXml(readFileSync(junit, "utf8"));
    assert.equal(root.attributes["failures"], "0");
    assert.equal((JSON.parse(readFileSync(json, "utf8")) as { seed: number }).seed, 99);
  });

  test("a failing target exits 1, prints evidence and a rerun line, and never a secret", async () => {
    const { out, io } = captureIo(env(faulty));
    const code = await main(
      ["run", "--base-url", faulty.baseUrl, "--seed", "5", "--only", "EVT", "--rpm", "6000"],
      io,
    );
    assert.equal(code, 1);
    assert.match(out.stdout, /✖ EVT-02 /);
    assert.match(out.stdout, /reproduce:/);
    assert.match(
      out.stdout,
      new RegExp(
        `rerun the failures: partner-yield-conformance run --seed 5 --only [A-Z0-9,-]*EVT-02[A-Z0-9,-]* --base-url ${faulty.baseUrl.replaceAll(".", "\\.")}`,
      ),
    );
    for (const secret of Object.values(env(faulty)))
      assert.ok(!out.stdout.includes(secret) && !out.stderr.includes(secret));
  });

  test("--max-requests refuses to start a plan that could exceed it (exit 2, no request sent)", async () => {
    const { out, io } = captureIo(env(clean));
    assert.equal(await main(["run", "--base-url", clean.baseUrl, "--max-requests", "10"], io), 2);
    assert.match(out.stderr, /more than --max-requests 10/);
  });

  test("a refused API key is a configuration error (exit 2)", async () => {
    const { out, io } = captureIo({ PARTNER_API_KEY: "ypk_test_wrong" });
    assert.equal(await main(["run", "--base-url", clean.baseUrl, "--only", "PRD-01"], io), 2);
    assert.match(out.stderr, /refused the API key/);
  });

  test("checks whose inputs are absent are skipped (⚠), not passed", async () => {
    const { out, io } = captureIo({ PARTNER_API_KEY: clean.apiKey });
    const code = await main(
      ["run", "--base-url", clean.baseUrl, "--only", "EVT-01,AUTH-03,PRD-07,POS-06", "--rpm", "6000"],
      io,
    );
    assert.equal(code, 0);
    for (const id of ["EVT-01", "AUTH-03", "PRD-07", "POS-06"])
      assert.match(out.stdout, new RegExp(`^⚠ ${id} .*skipped`, "m"));
    assert.match(out.stdout, /0 passed, 0 failed, 4 skipped/);
  });
});

describe("run without --base-url (the embedded demonstration)", () => {
  test("starts the embedded server with the demo credentials and passes every check", async () => {
    const { out, io } = captureIo();
    const code = await main(["run", "--seed", "3", "--rate-limit-probe"], io);
    assert.equal(code, 0, out.stdout);
    assert.match(out.stdout, /embedded sandbox server/);
    assert.match(out.stdout, / passed, 0 failed, 0 skipped/);
  });
});
