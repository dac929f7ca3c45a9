/**
 * Certification of the middleware as a team mounts it: an Express 5 app with the partner API at
 * /yield/v1 (sandbox fixtures, demo credentials), then its own JSON parser app-wide and routes of
 * its own (a GET, and `POST /internal/echo`). The conformance harness passes against
 * http://127.0.0.1:PORT/yield/v1 at both levels, a fresh app each; the app's own routes work before
 * and after; the bare path and a URL with bytes no decoder takes are answered by the core in
 * problem+json; the request id is the client's, else the core's; and after an oversized chunked
 * event `server.close()` returns.
 */
import assert from "node:assert/strict";
import type { Server } from "node:http";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { createPartnerApi } from "@partner-yield/core";
import { type CertifyResult, certify, sandboxInputs } from "@partner-yield/harness";
import {
  DEFAULT_FIXTURES_DIR,
  DEMO_CREDENTIALS,
  loadFixtureDir,
  nodeHmacSha256,
  nodeSha256,
  settlesWithin,
} from "@partner-yield/node-adapter";
import express from "express";
import { partnerYield } from "../src/index.js";

const MOUNT = "/yield/v1";
const DEMO = DEMO_CREDENTIALS;
const PROBLEM = "application/problem+json; charset=utf-8";

interface App {
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** The team's app: the API at /yield/v1, then its own parser and routes, on 127.0.0.1:0. */
async function startApp(): Promise<App> {
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadFixtureDir(DEFAULT_FIXTURES_DIR),
    basePath: MOUNT,
    hmac: nodeHmacSha256,
    sha256: nodeSha256,
    // The quota of `partner-yield serve --rate-limit-quota` for QA runs: a run is not throttled.
    rateLimitOverride: 1000,
  });
  const app = express();
  app.use(MOUNT, partnerYield({ api }));
  app.use(express.json());
  app.get("/status", (_req, res) => {
    res.json({ ok: true });
  });
  app.post("/internal/echo", (req, res) => {
    res.json({ received: req.body });
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const { port } = server.address() as { port: number };
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The app's own routes answer as the app wrote them: its JSON parser still parses its bodies. */
async function ownRoutesWork(url: string): Promise<void> {
  const status = await fetch(`${url}/status`);
  assert.deepEqual(await status.json(), { ok: true });
  const echo = await fetch(`${url}/internal/echo`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ hello: "team" }),
  });
  assert.equal(echo.status, 200);
  assert.deepEqual(await echo.json(), { received: { hello: "team" } });
}

/** The harness against the mount, with every input of our sandbox (`sandboxInputs`). */
async function runHarness(baseUrl: string, level: "spec" | "reference"): Promise<CertifyResult> {
  const sandbox = await sandboxInputs();
  return certify({
    baseUrl,
    level,
    credentials: {
      apiKey: sandbox.credentials.sandboxApiKey,
      signingSecret: sandbox.credentials.signingSecret,
      otherEnvApiKey: sandbox.credentials.productionApiKey,
      revokedApiKey: sandbox.credentials.revokedSandboxApiKey,
    },
    wallet: sandbox.credentials.walletWithPositions,
    fixturesDir: sandbox.fixturesDir,
    foreignSlug: sandbox.foreignSlug,
  });
}

for (const level of ["spec", "reference"] as const) {
  describe(`the conformance harness at level ${level}, against an app that mounts the middleware at ${MOUNT}`, {
    timeout: 120_000,
  }, () => {
    let started: App;
    before(async () => {
      started = await startApp();
    });
    after(() => started.close());

    test("the app's own routes work before the run", () => ownRoutesWork(started.url));

    test(`every check of level ${level} passes, none skipped but the opt-in quota probe`, async (t) => {
      const run = await runHarness(`${started.url}${MOUNT}`, level);
      t.diagnostic(`harness at level ${level}: ${JSON.stringify(run.summary)}`);
      assert.equal(run.code, 0, `${run.notPassed}\n${run.output}`);
      assert.equal(run.summary.failed, 0, run.notPassed);
      assert.equal(run.summary.warned, 0, run.notPassed);
      assert.equal(run.countedSkips, 0, run.notPassed);
      assert.ok(run.summary.passed > 20, JSON.stringify(run.summary));
    });

    test("the app's own routes work after the run", () => ownRoutesWork(started.url));
  });
}

describe(`what the middleware answers itself, under ${MOUNT}`, { timeout: 60_000 }, () => {
  let started: App;
  before(async () => {
    started = await startApp();
  });
  after(() => started.close());

  const problem = async (res: Response, status: number, code: string) => {
    assert.equal(res.status, status);
    assert.equal(res.headers.get("content-type"), PROBLEM);
    const body = (await res.json()) as { code: string; request_id: string };
    assert.equal(body.code, code);
    assert.equal(body.request_id, res.headers.get("x-request-id"));
  };

  test("the bare path, with and without its slash, is the core's 404, as the node listener answers its root", async () => {
    for (const path of [MOUNT, `${MOUNT}/`, `${MOUNT}?x=1`])
      await problem(await fetch(`${started.url}${path}`), 404, "not_found");
  });

  test("a URL with bytes no decoder takes is the core's answer under the mount, Express's elsewhere", async () => {
    const bad = "/products/%00%E2%82%AC..%2F%FF";
    const key = { "x-api-key": DEMO.sandboxApiKey };
    await problem(await fetch(`${started.url}${MOUNT}${bad}`, { headers: key }), 404, "product_not_found");
    await problem(await fetch(`${started.url}${MOUNT}${bad}`), 401, "missing_api_key");
    const elsewhere = await fetch(`${started.url}/internal${bad}`);
    assert.equal(elsewhere.status, 404);
    assert.match(elsewhere.headers.get("content-type") ?? "", /^text\/html/);
  });

  test("X-Request-Id: the client's when acceptable, else the core's", async () => {
    const headers = { "x-api-key": DEMO.sandboxApiKey };
    const echoed = await fetch(`${started.url}${MOUNT}/products`, {
      headers: { ...headers, "x-request-id": "trace-42" },
    });
    assert.equal(echoed.headers.get("x-request-id"), "trace-42");
    const made = await fetch(`${started.url}${MOUNT}/products`, { headers });
    assert.match(made.headers.get("x-request-id") ?? "", /^req_[0-9a-f]{12}[0-9a-z]{6,}$/);
  });
});

/** Writes `data` and resolves once it is flushed, or on the socket's first error. */
function write(socket: Socket, data: string): Promise<void> {
  return new Promise((resolve) => {
    socket.write(data, () => resolve());
  });
}

describe("an oversized chunked event, then close()", { timeout: 60_000 }, () => {
  test("413 with Connection: close, the socket is closed, and server.close() returns", async () => {
    const started = await startApp();
    const port = started.port;
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => undefined);
    let received = "";
    socket.setEncoding("latin1").on("data", (chunk: string) => {
      received += chunk;
    });
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    await write(
      socket,
      `POST ${MOUNT}/webhooks/inbound HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `X-Api-Key: ${DEMO.sandboxApiKey}\r\nX-Partner-Event: partner.user.created\r\n` +
        `X-Partner-Signature: ${"0".repeat(64)}\r\nIdempotency-Key: oversized-1\r\n` +
        "Transfer-Encoding: chunked\r\n\r\n",
    );
    const chunk = "x".repeat(16_384);
    // Twice the 64 KiB limit, then the client stops sending and ends its side (FIN), as a client
    // that gave up would: the server must not keep this socket.
    for (let i = 0; i < 8 && !received.includes("\r\n\r\n"); i++)
      await write(socket, `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    for (let i = 0; i < 100 && !received.includes("\r\n\r\n"); i++)
      await new Promise((r) => setTimeout(r, 20));
    socket.end();
    assert.match(received, /^HTTP\/1\.1 413 /);
    assert.match(received, /\r\nconnection: close\r\n/i);
    assert.match(received, /\r\ncontent-type: application\/problem\+json; charset=utf-8\r\n/i);
    assert.ok(await settlesWithin(closed, 10_000), "the server closed the connection");
    assert.ok(await settlesWithin(started.close(), 10_000), "server.close() returned within 10 s");
  });
});
