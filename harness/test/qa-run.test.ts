/**
 * The harness as QA runs it, run after run: a deployment on a mount path or another base path,
 * configuration mistakes caught before any request (empty credentials, unwritable reports), a
 * silent or plain-http target explained, a rerun line that replays a failure, evidence with the
 * headers judged, messages in wire names that count every wrong case, warnings and opt-in
 * checks reported as such, and EVT-22 against a server that closes after its early 413.
 */
import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { DEFAULT_FIXTURES_DIR } from "@partner-yield/node-adapter";
import { CheckContext, CheckFailure, CheckWarning, type Discovery } from "../src/checks/context.js";
import { CHECKS } from "../src/checks/registry.js";
import { DEFAULT_PLAN } from "../src/config.js";
import { VirtualClock } from "../src/docs/samples.js";
import { type EmbeddedTarget, startEmbeddedTarget } from "../src/embedded.js";
import { FAULTS } from "../src/faults/faults.js";
import { EVENTS, intercept, rewriteJson } from "../src/faults/interceptors.js";
import { defaultApiBasePath, HttpClient, onBasePath } from "../src/http/client.js";
import { main } from "../src/main.js";
import { Redactor } from "../src/redact.js";
import { toJUnit } from "../src/reporters/junit.js";
import { QUIET_CHECK, QUIET_MS } from "../src/runner.js";
import { TokenBucket } from "../src/throttle.js";
import { captureIo } from "./support/io.js";
import { runAgainst, startTarget } from "./support/targets.js";
import { parseXml } from "./support/xml.js";

const fault = (id: string) => {
  const found = FAULTS.find((f) => f.id === id);
  assert.ok(found, id);
  return found;
};

const envOf = (t: EmbeddedTarget) => ({
  PARTNER_API_KEY: t.apiKey,
  PARTNER_SIGNING_SECRET: t.signingSecret,
});

async function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

describe("a deployment on a mount path, or with another base path", () => {
  test("onBasePath maps the checks' /api/partner paths", () => {
    assert.equal(onBasePath("/api/partner/products", "/api/partner"), "/api/partner/products");
    assert.equal(onBasePath("/api/partner/products?x=1", "/v1/partner"), "/v1/partner/products?x=1");
    assert.equal(onBasePath("/api/partner/products", ""), "/products");
    assert.equal(onBasePath("/healthz", "/v1/partner"), "/healthz");
  });

  test("without --base-path, the API is at the base URL's path, or under /api/partner on a server root", () => {
    assert.equal(defaultApiBasePath("http://127.0.0.1:8787"), "/api/partner");
    assert.equal(defaultApiBasePath("http://127.0.0.1:8787/"), "/api/partner");
    assert.equal(defaultApiBasePath("https://gw.example/yield/v1"), "");
    assert.equal(defaultApiBasePath("https://gw.example/api/partner"), "");
  });

  test("--base-url with a mount path runs against the API mounted there, with no --base-path", async () => {
    // What a framework mount looks like: the API's routes right under /yield/v1.
    const target = await startEmbeddedTarget({ basePath: "/yield/v1" });
    try {
      const { out, io } = captureIo(envOf(target));
      const args = [
        "run",
        "--base-url",
        `${target.baseUrl}/yield/v1/`,
        "--rpm",
        "6000",
        "--only",
        "PRD,AUTH-01",
      ];
      assert.equal(await main(args, io), 0, out.stdout + out.stderr);
      assert.match(out.stdout, /[1-9][0-9]* passed, 0 failed/);
      const root = captureIo(envOf(target));
      assert.equal(await main(["run", "--base-url", target.baseUrl, "--only", "PRD-01"], root.io), 2);
      assert.match(
        root.out.stderr,
        /\/api\/partner\/products answered 404[\s\S]*put the API's mount path in --base-url/,
      );
    } finally {
      await target.close();
    }
  });

  test("a mount path and the API's own base path: --base-path adds it; without it, exit 2 naming --base-path", async () => {
    // The API at /yield/v1/v1/partner: a mount /yield/v1 in front of core's basePath /v1/partner.
    const target = await startEmbeddedTarget({ basePath: "/yield/v1/v1/partner" });
    try {
      const ok = captureIo(envOf(target));
      const args = [
        "run",
        "--base-url",
        `${target.baseUrl}/yield/v1`,
        "--rpm",
        "6000",
        "--only",
        "PRD,AUTH-01",
      ];
      assert.equal(await main([...args, "--base-path", "/v1/partner"], ok.io), 0, ok.out.stdout);
      assert.match(ok.out.stdout, /passed/);
      const wrong = captureIo(envOf(target));
      assert.equal(await main(args, wrong.io), 2);
      assert.match(
        wrong.out.stderr,
        /\/yield\/v1\/products answered 404[\s\S]*give it \(--base-path \/api\/partner/,
      );
      const doubled = captureIo(envOf(target));
      const twice = ["--base-url", `${target.baseUrl}/yield/v1/v1/partner`, "--base-path", "/v1/partner"];
      assert.equal(await main(["run", ...twice, "--only", "PRD-01"], doubled.io), 2);
      assert.match(doubled.out.stderr, /already ends with \/v1\/partner/);
    } finally {
      await target.close();
    }
  });

  test("properties --base-url takes --base-path too (its replay line repeats it)", async () => {
    const target = await startEmbeddedTarget({ basePath: "/v1/partner" });
    try {
      const { out, io } = captureIo({ PARTNER_API_KEY: target.apiKey });
      const args = ["properties", "--base-url", target.baseUrl, "--base-path", "/v1/partner"];
      const code = await main([...args, "--only", "P-04", "--rpm", "6000", "--allow-inconclusive"], io);
      assert.equal(code, 0, out.stdout + out.stderr);
      assert.match(out.stdout, /✔ P-04/);
      const wrong = captureIo({ PARTNER_API_KEY: target.apiKey });
      assert.equal(await main(["properties", "--base-url", target.baseUrl, "--only", "P-04"], wrong.io), 2);
      assert.match(wrong.out.stderr, /--base-path/);
    } finally {
      await target.close();
    }
  });

  test('--base-path "" tests an API mounted at the root', async () => {
    const target = await startEmbeddedTarget({ basePath: "" });
    try {
      const { out, io } = captureIo(envOf(target));
      const args = [
        "run",
        "--base-url",
        target.baseUrl,
        "--base-path",
        "",
        "--rpm",
        "6000",
        "--only",
        "PRD-01",
      ];
      assert.equal(await main(args, io), 0, out.stdout + out.stderr);
      const bad = captureIo(envOf(target));
      assert.equal(await main(["run", "--base-url", target.baseUrl, "--base-path", "v1/"], bad.io), 2);
      assert.match(bad.out.stderr, /--base-path must be/);
    } finally {
      await target.close();
    }
  });
});

describe("configuration mistakes are exit 2 before any request", () => {
  test("an empty credential is a configuration error, not an absent one", async () => {
    for (const [env, args, pattern] of [
      [
        { PARTNER_API_KEY: "ypk_test_x", PARTNER_SIGNING_SECRET: "" },
        [],
        /PARTNER_SIGNING_SECRET is set but empty/,
      ],
      [{ PARTNER_API_KEY: "" }, [], /PARTNER_API_KEY is set but empty/],
      [
        { PARTNER_API_KEY: "ypk_test_x", PARTNER_REVOKED_API_KEY: " " },
        [],
        /PARTNER_REVOKED_API_KEY is set but empty/,
      ],
      [{}, ["--api-key", ""], /--api-key is empty/],
    ] as const) {
      const { out, io } = captureIo(env);
      // Port 1: were a request sent, it would be "unreachable"; the message proves none was.
      assert.equal(await main(["run", "--base-url", "http://127.0.0.1:1", ...args], io), 2);
      assert.match(out.stderr, pattern);
      assert.doesNotMatch(out.stderr, /unreachable/);
    }
    const props = captureIo({ PARTNER_API_KEY: "" });
    assert.equal(await main(["properties", "--base-url", "http://127.0.0.1:1"], props.io), 2);
    assert.match(props.out.stderr, /PARTNER_API_KEY is set but empty/);
  });

  test("a report path that cannot be written fails at once (no spin under /proc)", {
    timeout: 20_000,
  }, async () => {
    for (const flag of ["--junit", "--json"]) {
      const { out, io } = captureIo({ PARTNER_API_KEY: "ypk_test_x" });
      assert.equal(await main(["run", "--base-url", "http://127.0.0.1:1", flag, "/proc/nope/x.xml"], io), 2);
      assert.match(out.stderr, new RegExp(`${flag} /proc/nope/x.xml cannot be written`));
      assert.doesNotMatch(out.stderr, /unreachable/);
    }
  });

  test("a silent target names --timeout; https against plain http is said in words", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    const plain = createHttpServer((_req, res) => res.end("plain"));
    const silentPort = await listen(silent);
    const plainPort = await listen(plain);
    try {
      const quiet = captureIo({ PARTNER_API_KEY: "ypk_test_x" });
      const args = ["run", "--only", "PRD-01", "--timeout", "300"];
      assert.equal(await main([...args, "--base-url", `http://127.0.0.1:${silentPort}`], quiet.io), 2);
      assert.match(quiet.out.stderr, /unreachable .*--timeout 300 ms/);
      assert.match(quiet.out.stderr, /within --timeout 300 ms/);
      const tls = captureIo({ PARTNER_API_KEY: "ypk_test_x" });
      assert.equal(await main([...args, "--base-url", `https://127.0.0.1:${plainPort}`], tls.io), 2);
      assert.match(tls.out.stderr, /answered in plain http, not https: use http:\/\//);
      assert.doesNotMatch(tls.out.stderr, /ssl3_get_record|openssl/i);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
      plain.close();
    }
  });
});

describe("a run's report", () => {
  let usdWrong: EmbeddedTarget;
  before(async () => {
    usdWrong = await startTarget(fault("usd-value-wrong"));
  });
  after(() => usdWrong.close());

  test("the rerun line repeats every input flag, never a secret, and a rerun of a failing check fails again", async () => {
    const run = captureIo({ PARTNER_SIGNING_SECRET: usdWrong.signingSecret });
    const args = [
      "run",
      "--base-url",
      usdWrong.baseUrl,
      "--api-key",
      usdWrong.apiKey,
      "--wallet",
      usdWrong.wallet,
      "--fixtures",
      DEFAULT_FIXTURES_DIR,
      "--foreign-slug",
      usdWrong.foreignSlug!,
      "--rpm",
      "6000",
      "--timeout",
      "20000",
      "--seed",
      "7",
      "--only",
      "POS-09,PRD-07",
    ];
    assert.equal(await main(args, run.io), 1, run.out.stdout);
    assert.match(run.out.stdout, /✖ POS-09 /);
    // Every wrong usd_value counted, in wire names.
    assert.match(run.out.stdout, /\d+ wrong figures? in \d+ of \d+ positions:\n.*"usd_value" should be/);
    const rerun = /rerun the checks that failed or warned: (.*)\n(.*)$/m.exec(run.out.stdout);
    assert.ok(rerun !== null, run.out.stdout);
    const line = rerun[1]!;
    for (const flag of [
      "--wallet",
      "--fixtures",
      "--foreign-slug",
      "--rpm 6000",
      "--timeout 20000",
      "--seed 7",
    ])
      assert.ok(line.includes(flag), `${flag} in ${line}`);
    assert.ok(!line.includes(usdWrong.apiKey) && !run.out.stdout.includes(usdWrong.apiKey));
    assert.match(rerun[2]!, /with PARTNER_SIGNING_SECRET, PARTNER_API_KEY set in the environment.*--api-key/);
    // As printed, with the variables it names set: the failure comes back.
    const again = captureIo({
      PARTNER_API_KEY: usdWrong.apiKey,
      PARTNER_SIGNING_SECRET: usdWrong.signingSecret,
    });
    assert.equal(
      await main(line.replace(/^pnpm conformance /, "").split(" "), again.io),
      1,
      again.out.stdout,
    );
    assert.match(again.out.stdout, /✖ POS-09 /);
    assert.doesNotMatch(again.out.stdout, /○ POS-09/);
  });

  test("evidence shows the headers judged: an added CORS header, a debug header", async () => {
    const cors = await startTarget(fault("cors-enabled"));
    try {
      const report = await runAgainst(cors, { only: ["ERR-06"] });
      const result = report.results.find((r) => r.id === "ERR-06")!;
      assert.equal(result.status, "failed");
      assert.ok(
        result.evidence.some((e) => /access-control-allow-origin: \*/.test(e.response)),
        JSON.stringify(result.evidence),
      );
    } finally {
      await cors.close();
    }
    const evidence = CheckContext.evidence(
      {
        seq: 1,
        checkId: "X",
        request: {
          method: "GET",
          url: "http://h/api/partner/products",
          path: "/api/partner/products",
          headers: {},
          body: undefined,
        },
        response: { status: 200, headers: { "x-debug-key": "leak", date: "today" }, text: "{}" },
        error: undefined,
        attempts: 1,
        durationMs: 1,
      },
      new Redactor([]),
      undefined,
    );
    assert.match(evidence.response, /x-debug-key: leak/);
    assert.doesNotMatch(evidence.response, /date:/);
  });

  test("EVT-19 says one event_id and a wrong duplicate flag; EVT-03 speaks wire names", async () => {
    const allFresh = await startTarget({
      wrap: (api) =>
        intercept(api, async (req, next) => {
          const res = await next(req);
          if (req.path !== EVENTS || res.status !== 200) return res;
          return rewriteJson(res, (body) => ({ ...body, duplicate: false }));
        }),
    });
    try {
      const report = await runAgainst(allFresh, { only: ["EVT-19", "EVT-03"] });
      const evt19 = report.results.find((r) => r.id === "EVT-19")!;
      assert.equal(evt19.status, "failed", evt19.message);
      assert.match(
        evt19.message!,
        /all with one "event_id" \(\d+\): one event, as required; but \d+ of them answered "duplicate": false/,
      );
      const evt03 = report.results.find((r) => r.id === "EVT-03")!;
      assert.equal(evt03.status, "failed", evt03.message);
      assert.match(evt03.message!, /"event_id"/);
      assert.doesNotMatch(evt03.message!, /eventId/);
    } finally {
      await allFresh.close();
    }
  });

  test("YLD-03 counts every wrong figure", async () => {
    const up = await startTarget(fault("yield-rounded-up"));
    try {
      const report = await runAgainst(up, { only: ["YLD-03"] });
      const result = report.results.find((r) => r.id === "YLD-03")!;
      assert.equal(result.status, "failed");
      assert.match(result.message!, /^\d+ wrong figures? in \d+ of 8 quotes:\n/);
    } finally {
      await up.close();
    }
  });

  test("--fail-on-skip ignores an opt-in check left out; a warning is marked apart in JUnit", async () => {
    const clean = await startTarget();
    try {
      const optIn = await runAgainst(clean, { only: ["RL-03", "PRD-01"], failOnSkip: true });
      assert.equal(optIn.results.find((r) => r.id === "RL-03")!.status, "skipped");
      assert.equal(optIn.exitCode, 0);
      const gap = await runAgainst(clean, {
        only: ["POS-06", "PRD-01"],
        failOnSkip: true,
        wallet: undefined,
      });
      assert.equal(gap.exitCode, 1);
      const warned = {
        ...optIn,
        results: [{ ...optIn.results[0]!, status: "warning" as const, message: "inconclusive" }],
      };
      const xml = parseXml(toJUnit(warned, new Redactor([])));
      const testcase = xml.children[0]!.children.find((c) => c.name === "testcase")!;
      assert.ok(!testcase.children.some((c) => c.name === "skipped" || c.name === "failure"));
      const props = testcase.children.find((c) => c.name === "properties")!;
      assert.ok(
        props.children.some((p) => p.attributes["name"] === "status" && p.attributes["value"] === "warning"),
      );
      assert.match(testcase.children.find((c) => c.name === "system-err")!.text, /warning: inconclusive/);
    } finally {
      await clean.close();
    }
  });
});

describe("sandbox-keys: our own sandbox certified with every optional input", () => {
  test("prints the demo keys as exports and a command that runs with nothing skipped", async () => {
    const target = await startTarget();
    try {
      const { out, io } = captureIo();
      assert.equal(await main(["sandbox-keys", "--base-url", target.baseUrl], io), 0);
      assert.match(out.stdout, /DEMO credentials: published, sandbox only/);
      const env = Object.fromEntries(
        [...out.stdout.matchAll(/^export (PARTNER_[A-Z_]+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]),
      );
      assert.deepEqual(Object.keys(env).sort(), [
        "PARTNER_API_KEY",
        "PARTNER_OTHER_ENV_API_KEY",
        "PARTNER_REVOKED_API_KEY",
        "PARTNER_SIGNING_SECRET",
      ]);
      assert.match(env["PARTNER_OTHER_ENV_API_KEY"]!, /^ypk_live_/);
      const command = out.stdout.trim().split("\n").at(-1)!;
      for (const flag of ["--wallet", "--fixtures", "--foreign-slug", "--fail-on-skip"])
        assert.ok(command.includes(flag), command);
      const args = command
        .replace(/^pnpm conformance /, "")
        .split(" ")
        .filter((a) => !/^--junit$|\.xml$/.test(a));
      const run = captureIo(env);
      const only = ["--only", "AUTH-03,AUTH-06,PRD-07,POS-06,POS-09,EVT-01", "--rpm", "6000"];
      assert.equal(await main([...args, ...only], run.io), 0, run.out.stdout + run.out.stderr);
      assert.match(run.out.stdout, /6 passed, 0 failed, 0 warnings, 0 skipped/);
      const help = captureIo();
      assert.equal(await main(["sandbox-keys", "--help"], help.io), 0);
      assert.match(help.out.stdout, /never|refuses every one/);
    } finally {
      await target.close();
    }
  });
});

describe("RL-02 is its own phase, never a standing warning", () => {
  test("in a run longer than the window it runs last, a window after a quiet stretch the harness keeps", async () => {
    const clean = await startTarget();
    try {
      // 20 a minute: the throttle makes this run longer than the window (on the virtual clock).
      const clock = new VirtualClock();
      const report = await runAgainst(clean, {
        only: ["PRD", "YLD", "RL"],
        rpm: 20,
        burst: 1,
        clock,
      });
      const ids = report.results.map((r) => r.id);
      const rl02 = report.results.find((r) => r.id === QUIET_CHECK)!;
      assert.equal(rl02.status, "passed", rl02.message);
      assert.ok(ids.indexOf("RL-02") > ids.indexOf("YLD-02"), ids.join(" "));
      assert.ok(ids.indexOf("RL-02") < ids.indexOf("RL-03"), ids.join(" "));
      assert.ok(
        rl02.notes.some((n) => n.includes(`quiet stretch of ${QUIET_MS / 1000} s`)),
        rl02.notes.join("\n"),
      );
      // A short run needs no quiet stretch: its start is one.
      const short = await runAgainst(clean, { only: ["PRD-01", "RL-02"] });
      const alone = short.results.find((r) => r.id === QUIET_CHECK)!;
      assert.equal(alone.status, "passed", alone.message);
      assert.ok(alone.notes.some((n) => n.includes("first request was still in the rolling window")));
    } finally {
      await clean.close();
    }
  });
});

describe("EVT-22 against a server that closes after its early 413", () => {
  const evt22 = CHECKS.find((c) => c.id === "EVT-22")!;

  /** A server that reads the request head and `limit` body bytes, then answers (or not) and destroys the socket. */
  async function closingServer(answer: boolean): Promise<{ port: number; close(): void }> {
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      let seen = 0;
      socket.on("error", () => {});
      socket.on("data", (chunk: Buffer) => {
        seen += chunk.length;
        if (seen < 80 * 1024 || socket.destroyed) return;
        const body = '{"success":false,"error":"too large","code":"payload_too_large"}';
        if (answer)
          socket.write(
            `HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
          );
        // Closed with the rest unread: the kernel resets the connection.
        setTimeout(() => socket.destroy(), answer ? 5 : 0);
      });
    });
    const port = await listen(server);
    return {
      port,
      close: () => {
        for (const s of sockets) s.destroy();
        server.close();
      },
    };
  }

  async function runEvt22(port: number): Promise<unknown> {
    const client = new HttpClient({
      baseUrl: `http://127.0.0.1:${port}`,
      bucket: new TokenBucket({ perMinute: 6000, burst: 100 }),
      timeoutMs: 4000,
    });
    const inputs = {
      level: "reference" as const,
      seed: 1,
      apiKey: "ypk_test_x",
      signingSecret: "secret",
      otherEnvApiKey: undefined,
      foreignSlug: undefined,
      wallet: undefined,
      fixtures: undefined,
      revokedApiKey: undefined,
      environment: "sandbox" as const,
      plan: DEFAULT_PLAN,
      runTag: "qa",
      signing: undefined,
      timeoutMs: 4000,
    };
    const discovery = { exchange: undefined, products: [], reason: undefined } as unknown as Discovery;
    const t = new CheckContext("EVT-22", inputs, discovery, client, "status");
    try {
      if (evt22.kind === "scenario") await evt22.run(t);
      return undefined;
    } catch (error) {
      return error;
    } finally {
      await client.close();
    }
  }

  test("a 413 then a reset is judged by the status read, never a transport failure", async () => {
    const server = await closingServer(true);
    try {
      for (let i = 0; i < 3; i++) {
        const outcome = await runEvt22(server.port);
        if (outcome instanceof CheckFailure) assert.fail(`a failure: ${outcome.message}`);
        if (outcome instanceof CheckWarning) assert.match(outcome.message, /no status could be read/);
        else assert.equal(outcome, undefined, String(outcome));
      }
    } finally {
      server.close();
    }
  });

  test("when no status could be read, it says so and why", async () => {
    const server = await closingServer(false);
    try {
      const outcome = await runEvt22(server.port);
      assert.ok(outcome instanceof CheckWarning, String(outcome));
      assert.match(outcome.message, /no status could be read in two tries/);
      assert.match(outcome.message, /EPIPE|ECONNRESET|UND_ERR_SOCKET|closed/);
      assert.match(outcome.message, /while still sending the body, after \d+ bytes/);
    } finally {
      server.close();
    }
  });
});
