/**
 * Reports: JUnit XML that is well-formed and shaped as viewers expect, JSON, the console report
 * with evidence and a curl command, and no secret anywhere.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type CheckResult, FAILURE_KINDS } from "../src/checks/types.js";
import { composed } from "../src/docs/samples.js";
import type { EmbeddedTarget } from "../src/embedded.js";
import { FAULTS } from "../src/faults/faults.js";
import { toCurl } from "../src/http/curl.js";
import { main, writeReports } from "../src/main.js";
import { Redactor } from "../src/redact.js";
import { ConsoleReporter } from "../src/reporters/console.js";
import { toJson } from "../src/reporters/json.js";
import { toJUnit, xmlEscape } from "../src/reporters/junit.js";
import { type RunReport, redactorFor } from "../src/runner.js";
import { captureIo } from "./support/io.js";
import { runAgainst, startTarget } from "./support/targets.js";
import { parseXml, type XmlElement } from "./support/xml.js";

const SEED = 4242;

/** A run with failures (two faults' checks), a skip and passes. */
async function mixedRun(target: EmbeddedTarget): Promise<RunReport> {
  return runAgainst(target, {
    seed: SEED,
    only: ["AUTH", "EVT-04", "EVT-05", "ERR-02", "RL-03", "PRD-07"],
    foreignSlug: undefined,
  });
}

function collect(): { readonly text: string; stream: { write(s: string): void; isTTY: false } } {
  const out = {
    text: "",
    stream: {
      write(s: string) {
        out.text += s;
      },
      isTTY: false as const,
    },
  };
  return out;
}

describe("reports of a run with failures", () => {
  let target: EmbeddedTarget;
  let report: RunReport;
  let redactor: Redactor;
  const secrets: string[] = [];

  before(async () => {
    const secretEcho = FAULTS.find((f) => f.id === "secret-echoed")!;
    const reusedKey = FAULTS.find((f) => f.id === "reused-key-accepted")!;
    // Both faults at once: ERR-02 and EVT-04 fail, the rest passes or is skipped.
    target = await startTarget(composed(reusedKey, secretEcho));
    report = await mixedRun(target);
    redactor = redactorFor({
      apiKey: target.apiKey,
      signingSecret: target.signingSecret,
      otherEnvApiKey: target.otherEnvApiKey,
    } as never);
    secrets.push(target.apiKey, target.signingSecret, target.otherEnvApiKey);
  });
  after(() => target.close());

  test("the run has the failures, skips and passes the report tests rely on", () => {
    const status = (id: string) => report.results.find((r) => r.id === id)?.status;
    assert.equal(status("EVT-04"), "failed");
    assert.equal(status("ERR-02"), "failed");
    assert.equal(status("PRD-07"), "skipped", "no --foreign-slug");
    assert.equal(status("RL-03"), "skipped", "no --rate-limit-probe");
    assert.equal(status("AUTH-01"), "passed");
  });

  test("every failure has a kind: the status of EVT-04 (a 200 where a refusal was due), the secret leak of ERR-02 (a response check)", () => {
    const result = (id: string) => report.results.find((r) => r.id === id)!;
    assert.equal(result("EVT-04").failureKind, "status");
    assert.equal(result("EVT-04").kind, "scenario");
    assert.equal(result("ERR-02").failureKind, "secret_leak");
    assert.equal(result("ERR-02").kind, "response");
    for (const r of report.results)
      assert.equal(r.failureKind !== undefined, r.status === "failed", `${r.id}: a kind exactly when failed`);
  });

  test("JUnit XML is well-formed: testsuites / testsuite / testcase / failure / skipped, counts agree", () => {
    const xml = toJUnit(report, redactor);
    const root = parseXml(xml);
    assert.equal(root.name, "testsuites");
    const cases: XmlElement[] = [];
    for (const suite of root.children) {
      assert.equal(suite.name, "testsuite");
      const testcases = suite.children.filter((c) => c.name === "testcase");
      assert.equal(Number(suite.attributes["tests"]), testcases.length);
      assert.equal(
        Number(suite.attributes["failures"]),
        testcases.filter((c) => c.children.some((x) => x.name === "failure")).length,
      );
      assert.equal(
        Number(suite.attributes["skipped"]),
        testcases.filter((c) => c.children.some((x) => x.name === "skipped")).length,
      );
      const properties = suite.children.find((c) => c.name === "properties")!;
      const seed = properties.children.find((p) => p.attributes["name"] === "seed");
      assert.equal(seed?.attributes["value"], String(SEED), "the seed is a property of every suite");
      cases.push(...testcases);
    }
    assert.equal(Number(root.attributes["tests"]), report.results.length);
    assert.equal(Number(root.attributes["failures"]), report.summary.failed);
    assert.equal(cases.length, report.results.length);
    const evt04 = cases.find((c) => c.attributes["name"]?.startsWith("EVT-04 "))!;
    const failure = evt04.children.find((c) => c.name === "failure")!;
    assert.match(failure.attributes["message"]!, /expected a refusal, got 200/);
    assert.equal(failure.attributes["type"], "status", "the failure kind, for dashboards");
    assert.ok(failure.text.startsWith(`status: ${FAILURE_KINDS.status}`));
    assert.match(failure.text, /curl -sS -i -X POST/);
    assert.match(failure.text, /\$PARTNER_SIGNING_SECRET/);
  });

  test("JUnit escapes markup and drops characters XML cannot hold", () => {
    const nasty: CheckResult = {
      ...report.results[0]!,
      status: "failed",
      message: `<b>&"quoted"'\u0000\u0007\uFFFE</b> ]]> 😀`,
      evidence: [{ request: "GET /?a=<x>&b", response: "HTTP 500\n\u001b[31m", curl: "curl 'x'" }],
    };
    const xml = toJUnit({ ...report, results: [nasty] }, redactor);
    const root = parseXml(xml);
    const failure = root.children[0]!.children.find((c) => c.name === "testcase")!.children[0]!;
    assert.equal(failure.attributes["message"], `<b>&"quoted"'\uFFFD\uFFFD\uFFFD</b> ]]> 😀`);
    assert.equal(xmlEscape("a&b<c>"), "a&amp;b&lt;c&gt;");
  });

  test("the JSON report carries the seed, the summary, the evidence and each result's kinds", () => {
    const json = JSON.parse(toJson(report, redactor)) as RunReport;
    assert.equal(json.seed, SEED);
    assert.deepEqual(json.summary, report.summary);
    const failed = json.results.find((r) => r.id === "ERR-02")!;
    assert.ok(failed.evidence.length > 0);
    assert.equal(failed.failureKind, "secret_leak");
    assert.equal(failed.kind, "response");
  });

  test("a warning is marked apart in JUnit: neither a skip nor a failure, a status property and system-err", () => {
    const warned: CheckResult = { ...report.results[0]!, status: "warning", message: "inconclusive: …" };
    const root = parseXml(
      toJUnit({ ...report, results: [warned], summary: { ...report.summary, warned: 1 } }, redactor),
    );
    const testcase = root.children[0]!.children.find((c) => c.name === "testcase")!;
    assert.ok(!testcase.children.some((c) => c.name === "skipped" || c.name === "failure"));
    const status = testcase.children[0]!.children.find((p) => p.attributes["name"] === "status")!;
    assert.equal(status.attributes["value"], "warning");
    assert.match(testcase.children.find((c) => c.name === "system-err")!.text, /^warning: inconclusive/);
    assert.equal(root.children[0]!.attributes["skipped"], "0");
  });

  test("the console report shows ✔ ✖ ⚠, the evidence, a curl command and the seed", () => {
    const out = collect();
    const err = collect();
    const reporter = new ConsoleReporter(out.stream, err.stream, redactor);
    for (const result of report.results) reporter.result(result);
    reporter.summary(report, "partner-yield-conformance run --seed 4242 --only EVT-04,ERR-02");
    assert.match(out.text, /^✔ AUTH-01 /m);
    assert.match(out.text, /^✖ EVT-04 /m);
    assert.match(out.text, /^○ RL-03 .*skipped: opt-in/m);
    assert.match(out.text, /^✖ ERR-02 .*\[secret_leak\]/m);
    assert.match(out.text, /reproduce:\n\s+body='/);
    assert.match(out.text, /seed 4242/);
    assert.equal(err.text, "", "no progress line when stderr is not a terminal");
  });

  test("no report, evidence or message contains a secret", () => {
    const out = collect();
    const reporter = new ConsoleReporter(out.stream, collect().stream, redactor);
    for (const result of report.results) reporter.result(result);
    const outputs = [
      toJUnit(report, redactor),
      toJson(report, redactor),
      out.text,
      JSON.stringify(report.results),
    ];
    for (const output of outputs) {
      for (const secret of secrets)
        assert.ok(!output.includes(secret), `a secret leaked: ${secret.slice(0, 12)}…`);
    }
    assert.match(out.text, /\$PARTNER_API_KEY/);
  });
});

describe("report files", () => {
  const dir = mkdtempSync(join(tmpdir(), "conformance-reports-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("missing directories are created; an unwritable path exits 2 before any request", async () => {
    const target = await startTarget();
    try {
      const junit = join(dir, "a", "b", "report.xml");
      const ok = captureIo({ PARTNER_API_KEY: target.apiKey });
      const args = ["run", "--base-url", target.baseUrl, "--only", "PRD-01", "--rpm", "6000"];
      assert.equal(await main([...args, "--junit", junit], ok.io), 0, ok.out.stderr);
      assert.match(readFileSync(junit, "utf8"), /<testsuites/);
    } finally {
      await target.close();
    }
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

describe("curl commands", () => {
  const redactor = new Redactor([
    { value: "ypk_test_SECRETSECRETSECRET", placeholder: "$PARTNER_API_KEY" },
    { value: "whsec_SIGNINGSECRET", placeholder: "$PARTNER_SIGNING_SECRET" },
  ]);

  test("an API key becomes its variable, in double quotes so the shell expands it", () => {
    const curl = toCurl(
      {
        method: "GET",
        url: "http://h/api/partner/products",
        path: "/api/partner/products",
        headers: { "X-Api-Key": "ypk_test_SECRETSECRETSECRET" },
        body: undefined,
      },
      { redactor },
    );
    assert.equal(curl, `curl -sS -i 'http://h/api/partner/products' -H "X-Api-Key: $PARTNER_API_KEY"`);
  });

  test("a valid signature is recomputed with openssl; a body's single quotes survive", async () => {
    const { hmacHex } = await import("../src/http/signature.js");
    const body = new TextEncoder().encode(`{"data":{"name":"O'Brien"}}`);
    const signature = hmacHex("whsec_SIGNINGSECRET", body);
    const curl = toCurl(
      {
        method: "POST",
        url: "http://h/x",
        path: "/x",
        headers: { "X-Partner-Signature": signature.toUpperCase() },
        body,
      },
      { redactor, signingSecret: "whsec_SIGNINGSECRET" },
    );
    assert.ok(curl.startsWith(`body='{"data":{"name":"O'\\''Brien"}}'\n`), curl);
    assert.match(
      curl,
      /openssl dgst -sha256 -hmac "\$PARTNER_SIGNING_SECRET" -r \| cut -d' ' -f1 \| tr a-f A-F\)"/,
    );
    assert.ok(!curl.includes(signature.toUpperCase()));
  });

  test("a large body is described, not printed", () => {
    const curl = toCurl(
      { method: "POST", url: "http://h/x", path: "/x", headers: {}, body: new Uint8Array(70_000).fill(120) },
      { redactor },
    );
    assert.match(curl, /# request body: 70000 bytes, not shown/);
  });
});

describe("the progress line", () => {
  test("is drawn and cleared on a terminal, silent otherwise", async () => {
    const { ProgressLine } = await import("../src/reporters/console.js");
    const tty = collectTty(true);
    const line = new ProgressLine(tty.stream);
    line.update("[1/70] AUTH-01 · 0 requests");
    line.clear();
    assert.equal(tty.text, "\r\x1b[K[1/70] AUTH-01 · 0 requests\r\x1b[K");
    const piped = collectTty(false);
    const quiet = new ProgressLine(piped.stream);
    quiet.update("x");
    quiet.clear();
    assert.equal(piped.text, "");
  });
});

function collectTty(isTTY: boolean): {
  readonly text: string;
  stream: { write(s: string): void; isTTY: boolean };
} {
  const out = {
    text: "",
    stream: {
      write(s: string) {
        out.text += s;
      },
      isTTY,
    },
  };
  return out;
}
