/**
 * The CLI as a user runs it: a child process (built or from source: cli-command.ts). Help, bad input
 * (exit 2), a broken fixture (exit 2, file and field named), and a real start whose printed curl
 * commands are run with bash against it.
 */
import assert from "node:assert/strict";
import { type ChildProcessByStdio, execFile, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { DEFAULT_FIXTURES_DIR, DEFAULT_TIMEOUTS } from "@partner-yield/node-adapter";
import { DEMO, privateFixtures } from "@partner-yield/node-adapter/testing";
import { Client } from "undici";
import { SCRIPT_END, SCRIPT_START } from "../src/banner.js";
import { cliArgs, cliEnv } from "./cli-command.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

type Child = ChildProcessByStdio<null, Readable, Readable>;

function spawnCli(args: string[], env: Record<string, string> = {}): Child {
  return spawn(process.execPath, cliArgs(args), {
    cwd: REPO,
    env: cliEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function runCli(args: string[], env: Record<string, string> = {}) {
  const child = spawnCli(args, env);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, stderr };
}

/** A started server: its banner (once complete), and a way to stop it with a signal. */
async function startCli(args: string[]) {
  const child = spawnCli(["serve", "--port", "0", ...args]);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const deadline = Date.now() + 15_000;
  while (!stdout.includes(SCRIPT_END)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no banner: ${stdout}\n${stderr}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const url = /serving \w+ at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
  assert.ok(url, stdout);
  return {
    child,
    url,
    banner: stdout,
    output: () => ({ stdout, stderr }),
    async stop(signal: NodeJS.Signals) {
      child.kill(signal);
      return exited;
    },
  };
}

function bash(script: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile("bash", ["-euo", "pipefail", "-c", script], { timeout: 10_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

describe("partner-yield CLI", () => {
  const running: Child[] = [];
  after(() => {
    for (const child of running) if (child.exitCode === null) child.kill("SIGKILL");
  });

  test("--help explains every flag and its variable (also `serve --help`)", async () => {
    for (const args of [["--help"], ["serve", "--help"], ["-h"]]) {
      const { code, stdout, stderr } = await runCli(args);
      assert.equal(code, 0, stderr);
      for (const text of [
        "partner-yield serve",
        "--port",
        "PORT",
        "--host",
        "PARTNER_YIELD_HOST",
        "--env",
        "PARTNER_YIELD_ENV",
        "--fixtures",
        "--body-limit",
        "65536",
        "--headers-timeout",
        "--request-timeout",
        "--keep-alive-timeout",
        "--shutdown-timeout",
        "--rate-limit-quota",
        "--max-connections",
        "PARTNER_YIELD_MAX_CONNECTIONS",
        "--max-connections-per-address",
        "--crowded-idle-timeout",
        "--heap-growth",
        "PARTNER_YIELD_HEAP_GROWTH_PERCENT",
        "--log",
        String(DEFAULT_TIMEOUTS.keepAliveTimeoutMs),
      ]) {
        assert.ok(stdout.includes(text), `help lacks ${text}`);
      }
    }
  });

  test("a bad flag, value, variable or command: a clear message and exit 2", async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["serve", "--nope"], {}, /Unknown option "--nope"/],
      [["serve", "--port", "99999"], {}, /--port must be an integer from 0 to 65535, not "99999"/],
      [["serve", "--env", "staging"], {}, /--env must be one of sandbox, production/],
      [["serve"], { PORT: "eighty" }, /PORT must be an integer/],
      [
        ["serve", "--headers-timeout", "5000", "--request-timeout", "1000"],
        {},
        /must not exceed the request timeout/,
      ],
      [[], {}, /missing command/],
      [["start"], {}, /unknown command "start"/],
    ];
    await Promise.all(
      cases.map(async ([args, env, message]) => {
        const { code, stdout, stderr } = await runCli(args, env);
        assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
        assert.match(stderr, message);
        assert.match(stderr, /partner-yield --help/);
        assert.equal(stdout, "");
      }),
    );
  });

  test("a broken fixture file: the message names the file and the field, exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "py-fixtures-"));
    try {
      cpSync(DEFAULT_FIXTURES_DIR, dir, { recursive: true });
      const products = JSON.parse(readFileSync(join(dir, "products.json"), "utf8"));
      products[1].service_fee_bps = -5;
      writeFileSync(join(dir, "products.json"), JSON.stringify(products));
      const broken = await runCli(["serve", "--fixtures", dir]);
      assert.equal(broken.code, 2, broken.stderr);
      assert.match(broken.stderr, /products\.json: \[1\]\.service_fee_bps: /);

      cpSync(join(DEFAULT_FIXTURES_DIR, "products.json"), join(dir, "products.json"));
      writeFileSync(join(dir, "vaults.json"), '[{"chain_id": 1,]');
      const syntax = await runCli(["serve"], { PARTNER_YIELD_FIXTURES: dir });
      assert.equal(syntax.code, 2, syntax.stderr);
      assert.match(syntax.stderr, /vaults\.json: \(root\): invalid JSON/);

      rmSync(join(dir, "prices.json"));
      cpSync(join(DEFAULT_FIXTURES_DIR, "vaults.json"), join(dir, "vaults.json"));
      const missing = await runCli(["serve", "--fixtures", dir]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /prices\.json: \(root\): file not found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an address in use: a clear message and exit 1", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    try {
      const port = (blocker.address() as import("node:net").AddressInfo).port;
      const { code, stderr } = await runCli(["serve", "--port", String(port)]);
      assert.equal(code, 1);
      assert.match(
        stderr,
        new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use`),
      );
    } finally {
      blocker.close();
    }
  });

  test("serve with no flags but --port 0: prints the real URL, the demo credentials, and curls that work", async () => {
    const server = await startCli(["--log", "none"]);
    running.push(server.child);
    assert.match(server.banner, /serving sandbox at http:\/\/127\.0\.0\.1:(?!0\b)\d+/);
    assert.ok(server.banner.includes(DEMO.sandboxApiKey));
    assert.ok(server.banner.includes(DEMO.signingSecret));
    const script = server.banner.slice(
      server.banner.indexOf(SCRIPT_START),
      server.banner.indexOf(SCRIPT_END),
    );
    assert.equal((script.match(/^curl /gm) ?? []).length, 3);
    assert.match(script, /openssl dgst -sha256 -hmac "\$SECRET"/);

    const [products, yieldCalc, event] = (await bash(script))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(products.success, true);
    assert.ok(products.data.length > 0);
    assert.equal(yieldCalc.success, true);
    assert.equal(yieldCalc.data.principal, "1000");
    assert.deepEqual(event, { success: true, event_id: 1, duplicate: false });
    const again = (await bash(script))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(again[2], { success: true, event_id: 1, duplicate: true });

    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    const code = await server.stop("SIGTERM");
    assert.equal(code, 0, server.output().stderr);
    // stderr: JSON lines only, in one field order: listening, shutting_down, stopped.
    const lines = server
      .output()
      .stderr.trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => l["msg"]),
      ["listening", "shutting_down", "stopped"],
    );
    for (const line of lines)
      assert.deepEqual(Object.keys(line).slice(0, 4), ["time", "level", "msg", "instance"]);
    assert.equal(lines[1]!["signal"], "SIGTERM");
  });

  test("production, --rate-limit-quota and the JSON request log; SIGINT stops it cleanly", async () => {
    // Production refuses the published demo credentials: these fixtures hold fresh ones.
    const fixtures = privateFixtures();
    after(() => fixtures.remove());
    const server = await startCli([
      "--env",
      "production",
      "--fixtures",
      fixtures.dir,
      "--rate-limit-quota",
      "2",
      "--log",
      "json",
      // Production without a terminal prints no banner unless asked: the URL is read from it.
      "--banner",
      "on",
    ]);
    running.push(server.child);
    assert.ok(!server.banner.includes(fixtures.productionApiKey), "no credential printed in production");
    assert.match(server.banner, /No credential is printed in production/);
    const client = new Client(server.url);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await client.request({
        method: "GET",
        path: "/api/partner/products?secret=zzz",
        headers: { "x-api-key": fixtures.productionApiKey },
      });
      statuses.push(res.statusCode);
      assert.equal(res.headers["ratelimit-policy"], '"production";q=2;w=60');
      await res.body.text();
    }
    assert.deepEqual(statuses, [200, 200, 429]);
    const sandboxKey = await client.request({
      method: "GET",
      path: "/api/partner/products",
      headers: { "x-api-key": fixtures.sandboxApiKey },
    });
    assert.equal(((await sandboxKey.body.json()) as { code: string }).code, "wrong_environment");
    await client.close();

    assert.equal(await server.stop("SIGINT"), 0);
    const lines = server
      .output()
      .stdout.split("\n")
      .filter((l) => l.startsWith("{"));
    const entries = lines.map((l) => JSON.parse(l) as { path: string; status: number; msg: string });
    assert.deepEqual(
      entries.map((e) => e.status),
      [200, 200, 429, 401],
    );
    assert.ok(entries.every((e) => e.msg === "request" && e.path === "/api/partner/products"));
    assert.ok(!lines.join("").includes("zzz") && !lines.join("").includes(fixtures.productionApiKey));
  });
});
