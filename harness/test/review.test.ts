/**
 * The QA review's findings, each pinned: the position math is recomputed from the fixtures, RL-02
 * is sound in a rolling window, a base URL with a path is a configuration error, reports are
 * prepared before the run, and the small CLI fixes.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DEFAULT_FIXTURES_DIR } from "@partner-yield/node-adapter";
import { CheckContext } from "../src/checks/context.js";
import { conclusive } from "../src/checks/rate-limit.js";
import { DEFAULTS } from "../src/config.js";
import type { EmbeddedTarget } from "../src/embedded.js";
import { main, writeReports } from "../src/main.js";
import { Redactor } from "../src/redact.js";
import { type RunReport, runConformance } from "../src/runner.js";
import { captureIo } from "./support/io.js";
import { notPassed, runAgainst, startTarget } from "./support/targets.js";

const dir = mkdtempSync(join(tmpdir(), "conformance-review-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let target: EmbeddedTarget;
before(async () => {
  target = await startTarget();
});
after(() => target.close());

const env = () => ({ PARTNER_API_KEY: target.apiKey });

describe("POS-09/POS-10: the position math", () => {
  test("the embedded fixtures are the default reference: both pass, for the wallet and a zero wallet", async () => {
    const report = await runAgainst(target, { only: ["POS-09", "POS-10"] });
    assert.equal(notPassed(report), "");
    assert.ok(report.results[0]!.requests >= 4, "a zero wallet and --wallet in each product");
  });

  test("without fixtures POS-09 is skipped with a clear reason", async () => {
    const report = await runAgainst(target, { only: ["POS-09"], fixtures: undefined });
    assert.equal(report.results[0]!.status, "skipped");
    assert.match(report.results[0]!.message!, /--fixtures DIR/);
  });

  test("--fixtures DIR against a base URL recomputes the positions; a bad DIR exits 2", async () => {
    const { out, io } = captureIo(env());
    const args = ["run", "--base-url", target.baseUrl, "--only", "POS-09", "--rpm", "6000"];
    const code = await main([...args, "--wallet", target.wallet, "--fixtures", DEFAULT_FIXTURES_DIR], io);
    assert.equal(code, 0, out.stdout);
    assert.match(out.stdout, /✔ POS-09/);
    const bad = captureIo(env());
    assert.equal(await main([...args, "--fixtures", join(dir, "nowhere")], bad.io), 2);
    assert.match(bad.out.stderr, /--fixtures .*nowhere.*file not found/);
  });
});

/** A fake target whose products answer with the RateLimit values `limit(n)` for the n-th request. */
async function fakeRateLimited(limit: (n: number) => string): Promise<{ url: string; server: Server }> {
  let n = 0;
  const server = createServer((_req, res) => {
    res.writeHead(200, {
      "content-type": "application/json; charset=utf-8",
      "ratelimit-policy": '"sandbox";q=100;w=60',
      ratelimit: `"sandbox";${limit(n++)}`,
    });
    res.end('{"success":true,"data":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, server };
}

async function rl02(limit: (n: number) => string) {
  const fake = await fakeRateLimited(limit);
  try {
    const report = await runConformance({
      baseUrl: fake.url,
      embedded: false,
      apiKey: "ypk_test_fake",
      signingSecret: undefined,
      otherEnvApiKey: undefined,
      foreignSlug: undefined,
      wallet: undefined,
      level: "reference",
      seed: 1,
      rpm: 6000,
      burst: 100,
      maxRequests: undefined,
      only: ["RL-02"],
      rateLimitProbe: false,
      plan: {
        yieldSamples: 2,
        productSample: 1,
        concurrentDuplicates: 2,
        probeBudget: DEFAULTS.probeBudget,
      },
      timeoutMs: 2000,
    });
    return report.results[0]!;
  } finally {
    fake.server.close();
  }
}

describe("RL-02 in an exact rolling window", () => {
  test("conclusive only when no counted request can leave the window before the next response", () => {
    assert.ok(conclusive(60, 0.1));
    assert.ok(!conclusive(1, 0));
    assert.ok(!conclusive(2, 1.2));
  });

  test("r repeating with t=1 (old requests leaving) is inconclusive, never a failure", async () => {
    const result = await rl02((n) => `r=${17 - (n % 2)};t=1`);
    assert.equal(result.status, "passed", result.message);
    assert.match(result.warnings.join("\n"), /inconclusive/);
  });

  test("r frozen while t says nothing can leave the window fails", async () => {
    const result = await rl02(() => "r=17;t=50");
    assert.equal(result.status, "failed");
    assert.match(result.message!, /should have dropped by one/);
    assert.equal(result.evidence.length, 2);
  });

  test("r counting down by one passes without a warning", async () => {
    const result = await rl02((n) => `r=${90 - n};t=50`);
    assert.equal(result.status, "passed", result.message);
    assert.deepEqual(result.warnings, []);
  });
});

describe("a base URL with a path", () => {
  for (const suffix of ["/foo/", "/api/partner"]) {
    test(`${suffix} is a configuration error at the first request (exit 2, with the hint)`, async () => {
      const { out, io } = captureIo(env());
      const code = await main(["run", "--base-url", `${target.baseUrl}${suffix}`, "--level", "spec"], io);
      assert.equal(code, 2, out.stdout);
      assert.match(out.stderr, /answered 404.*the base URL must be the server root, without \/api\/partner/);
      assert.ok(out.stderr.includes(`${suffix.replace(/\/$/, "")}/api/partner/products`), out.stderr);
    });
  }

  test("evidence shows the full path requested, base URL prefix included", () => {
    const evidence = CheckContext.evidence(
      {
        seq: 1,
        checkId: "X",
        request: {
          method: "GET",
          url: "http://127.0.0.1:9/foo/api/partner/products",
          path: "/api/partner/products",
          headers: {},
          body: undefined,
        },
        response: { status: 404, headers: {}, text: "" },
        error: undefined,
        attempts: 1,
        durationMs: 1,
      },
      new Redactor([]),
      undefined,
    );
    assert.match(evidence.request, /^GET \/foo\/api\/partner\/products$/m);
  });
});

describe("report files", () => {
  test("missing directories are created; an unwritable path exits 2 before any request", async () => {
    const junit = join(dir, "a", "b", "report.xml");
    const ok = captureIo(env());
    const args = ["run", "--base-url", target.baseUrl, "--only", "PRD-01", "--rpm", "6000"];
    assert.equal(await main([...args, "--junit", junit], ok.io), 0, ok.out.stderr);
    assert.match(readFileSync(junit, "utf8"), /<testsuites/);

    const file = join(dir, "plain-file");
    writeFileSync(file, "x");
    const bad = captureIo({ PARTNER_API_KEY: "ypk_test_x" });
    // An unreachable target: had a request been sent, the error would say "unreachable".
    const code = await main(
      ["run", "--base-url", "http://127.0.0.1:1", "--json", join(file, "report.json")],
      bad.io,
    );
    assert.equal(code, 2);
    assert.match(bad.out.stderr, /--json .* cannot be written/);
  });

  test("a report that cannot be written at the end: the other is written, and a failed run stays 1", () => {
    const json = join(dir, "late.json");
    const report = { exitCode: 1, results: [], summary: {} } as unknown as RunReport;
    const { out, io } = captureIo();
    const code = writeReports(report, { junit: dir, json }, new Redactor([]), io);
    assert.equal(code, 1);
    assert.match(out.stderr, /cannot write the JUnit report/);
    assert.ok(readFileSync(json, "utf8").length > 0);
    const passed = { ...report, exitCode: 0 } as RunReport;
    assert.equal(writeReports(passed, { junit: dir, json }, new Redactor([]), captureIo().io), 2);
  });
});

describe("small CLI fixes", () => {
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

  test("a refused key names where it came from", async () => {
    const flag = captureIo();
    const args = ["run", "--base-url", target.baseUrl, "--only", "PRD-01"];
    assert.equal(await main([...args, "--api-key", "ypk_test_wrong"], flag.io), 2);
    assert.match(flag.out.stderr, /check the key passed with --api-key/);
    const fromEnv = captureIo({ PARTNER_API_KEY: "ypk_test_wrong" });
    assert.equal(await main(args, fromEnv.io), 2);
    assert.match(fromEnv.out.stderr, /check PARTNER_API_KEY/);
  });

  test("--max-requests refusing a probe plan mentions --probe-budget", async () => {
    const { out, io } = captureIo(env());
    const args = ["run", "--base-url", target.baseUrl, "--rate-limit-probe", "--max-requests", "50"];
    assert.equal(await main(args, io), 2);
    assert.match(out.stderr, /--probe-budget/);
  });

  test("list aligns every column, RL-03's too", async () => {
    const { out, io } = captureIo();
    assert.equal(await main(["list"], io), 0);
    const rows = out.stdout
      .split("\n")
      .filter((line) => /^[A-Z]+-[0-9]{2} /.test(line) || line.startsWith("ID "));
    const titleAt = (line: string) => line.search(/ (CONTRACT|interface\.md|source)/);
    const costEnd = (line: string) => line.slice(0, titleAt(line)).trimEnd().length;
    assert.equal(new Set(rows.map(titleAt)).size, 1, "the source column starts at one offset");
    assert.equal(new Set(rows.map(costEnd)).size, 1, "the cost column ends at one offset");
    assert.ok(rows.some((r) => r.startsWith("RL-03")));
  });

  test("--fail-on-skip exits 1 when a selected check was skipped", async () => {
    const args = ["run", "--base-url", target.baseUrl, "--only", "PRD-01,POS-06,AUTH-06", "--rpm", "6000"];
    const plain = captureIo(env());
    assert.equal(await main(args, plain.io), 0);
    assert.match(plain.out.stdout, /⚠ AUTH-06 .*skipped/);
    const strict = captureIo(env());
    assert.equal(await main([...args, "--fail-on-skip"], strict.io), 1);
    assert.match(strict.out.stdout, /--fail-on-skip: 2 check\(s\) skipped/);
  });
});
