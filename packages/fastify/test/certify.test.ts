/**
 * Certification of the plugin as a team mounts it: a Fastify app with the partner API under
 * /yield/v1 (sandbox fixtures, demo credentials) beside routes of its own (a GET, and
 * `POST /internal/echo` with the app's own JSON parser). The conformance harness passes against
 * http://127.0.0.1:PORT/yield/v1 at both levels, a fresh app each; the app's own routes work before
 * and after; the bare prefix, a URL Fastify cannot decode and a Content-Type it refuses are answered
 * by the core in problem+json; the request id is the client's, else Fastify's; and after an
 * oversized chunked event `app.close()` returns.
 */
import assert from "node:assert/strict";
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
import Fastify, { type FastifyInstance } from "fastify";
import { partnerYield, partnerYieldFrameworkErrors } from "../src/index.js";

const MOUNT = "/yield/v1";
const DEMO = DEMO_CREDENTIALS;
const PROBLEM = "application/problem+json; charset=utf-8";

interface App {
  readonly app: FastifyInstance;
  readonly port: number;
  readonly url: string;
  /** Request ids Fastify gave the requests, by the X-Request-Id their answer carried. */
  readonly fastifyIds: Map<string, string>;
}

/** The team's app: its own routes, then the plugin under /yield/v1, on 127.0.0.1:0. */
async function startApp(): Promise<App> {
  let next = 0;
  const app = Fastify({
    frameworkErrors: partnerYieldFrameworkErrors(),
    genReqId: () => `app-${++next}`,
  });
  const fastifyIds = new Map<string, string>();
  app.addHook("onResponse", async (request, reply) => {
    fastifyIds.set(String(reply.getHeader("x-request-id")), request.id);
  });
  app.get("/status", async () => ({ ok: true }));
  app.post("/internal/echo", async (request) => ({ received: request.body }));
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadFixtureDir(DEFAULT_FIXTURES_DIR),
    basePath: MOUNT,
    hmac: nodeHmacSha256,
    sha256: nodeSha256,
    // The quota of `partner-yield serve --rate-limit-quota` for QA runs: a run is not throttled.
    rateLimitOverride: 1000,
  });
  await app.register(partnerYield, { api, prefix: MOUNT });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  return { app, port, url: `http://127.0.0.1:${port}`, fastifyIds };
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
  describe(`the conformance harness at level ${level}, against an app that mounts the plugin at ${MOUNT}`, {
    timeout: 120_000,
  }, () => {
    let started: App;
    before(async () => {
      started = await startApp();
    });
    after(() => started.app.close());

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

describe(`what the plugin answers itself, under ${MOUNT}`, { timeout: 60_000 }, () => {
  let started: App;
  before(async () => {
    started = await startApp();
  });
  after(() => started.app.close());

  const problem = async (res: Response, status: number, code: string) => {
    assert.equal(res.status, status);
    assert.equal(res.headers.get("content-type"), PROBLEM);
    const body = (await res.json()) as { code: string; request_id: string };
    assert.equal(body.code, code);
    assert.equal(body.request_id, res.headers.get("x-request-id"));
  };

  test("the bare prefix, with and without its slash, is the core's 404, as the node listener answers its root", async () => {
    for (const path of [MOUNT, `${MOUNT}/`])
      await problem(await fetch(`${started.url}${path}`), 404, "not_found");
  });

  test("a URL Fastify cannot decode is the core's answer under the mount, Fastify's elsewhere", async () => {
    const bad = "/products/%00%E2%82%AC..%2F%FF";
    const key = { "x-api-key": DEMO.sandboxApiKey };
    await problem(await fetch(`${started.url}${MOUNT}${bad}`, { headers: key }), 404, "product_not_found");
    await problem(await fetch(`${started.url}${MOUNT}${bad}`), 401, "missing_api_key");
    const elsewhere = await fetch(`${started.url}/internal${bad}`);
    assert.equal(elsewhere.status, 400);
    assert.equal(((await elsewhere.json()) as { code: string }).code, "FST_ERR_BAD_URL");
  });

  test("a Content-Type Fastify refuses is left to the core, which checks it after the key", async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${started.url}${MOUNT}/webhooks/inbound`, {
        method: "POST",
        headers: { "content-type": "nonsense", ...headers },
        body: "{}",
      });
    await problem(await post({}), 401, "missing_api_key");
    const keyed = await post({ "x-api-key": DEMO.sandboxApiKey });
    assert.equal(keyed.headers.get("content-type"), PROBLEM);
    assert.notEqual(((await keyed.json()) as { code: string }).code, "FST_ERR_CTP_INVALID_MEDIA_TYPE");
  });

  test("X-Request-Id: the client's when acceptable, else Fastify's request.id", async () => {
    const headers = { "x-api-key": DEMO.sandboxApiKey };
    const echoed = await fetch(`${started.url}${MOUNT}/products`, {
      headers: { ...headers, "x-request-id": "trace-42" },
    });
    assert.equal(echoed.headers.get("x-request-id"), "trace-42");
    const given = await fetch(`${started.url}${MOUNT}/products`, { headers });
    const id = given.headers.get("x-request-id") ?? "";
    assert.match(id, /^app-[0-9]+$/);
    assert.equal(started.fastifyIds.get(id), id, "the id Fastify logs the request under");
  });
});

/** Writes `data` and resolves once it is flushed, or on the socket's first error. */
function write(socket: Socket, data: string): Promise<void> {
  return new Promise((resolve) => {
    socket.write(data, () => resolve());
  });
}

describe("an oversized chunked event, then close()", { timeout: 60_000 }, () => {
  test("413 with Connection: close, the socket is closed, and app.close() returns", async () => {
    const { app, port } = await startApp();
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
    assert.ok(await settlesWithin(app.close(), 10_000), "app.close() returned within 10 s");
  });
});
