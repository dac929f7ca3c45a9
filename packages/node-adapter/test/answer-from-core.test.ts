/**
 * `answerFromCore` on a bare node:http server, written the way a framework writes a reply: the
 * exact bytes reach the core, the request id is the client's or the framework's, an oversized or
 * unread body closes its connection (so `server.close()` returns), a body read by someone else
 * first and a rejected handler are a 500 told to `onError`, and the listener's protocol refusals
 * apply.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { createPartnerApi, type PartnerApiHandler } from "@partner-yield/core";
import {
  assertProblem,
  eventBody,
  eventHeaders,
  INBOUND,
  KEY,
  RawConnection,
  requestHead,
} from "@partner-yield/node-adapter/testing";
import { answerFromCore, BodyAlreadyReadError, DEFAULT_FIXTURES_DIR, loadFixtureDir } from "../src/index.js";

/** What the framework in front of the core would do to the request before handing it over. */
type Before = (req: IncomingMessage) => Promise<void>;

describe("answerFromCore", { timeout: 20_000 }, () => {
  let server: Server;
  let port: number;
  const errors: Array<{ error: unknown; requestId: string }> = [];
  const api = createPartnerApi({ environment: "sandbox", ...loadFixtureDir(DEFAULT_FIXTURES_DIR) });
  /** Per path: a handler in place of the API, or a step before it. */
  const handlers = new Map<string, PartnerApiHandler>();
  const steps = new Map<string, Before>();

  before(async () => {
    server = createServer(async (req, res) => {
      const path = (req.url ?? "").split("?")[0]!;
      await steps.get(path)?.(req);
      const { response } = await answerFromCore(handlers.get(path) ?? api, req, {
        requestId: req.headers["x-framework-id"] as string | undefined,
        onError: (error, requestId) => errors.push({ error, requestId }),
      });
      // As a framework writes a reply: the headers given, and the body's length.
      const length = response.body === null ? undefined : Buffer.byteLength(response.body);
      res
        .writeHead(response.status, {
          ...response.headers,
          ...(length === undefined ? {} : { "content-length": length }),
        })
        .end(response.body ?? undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  test("a signed event reaches the core with its exact bytes, in one piece or in chunks", async () => {
    const body = eventBody();
    const key = `answer-${crypto.randomUUID()}`;
    const whole = await fetch(url(INBOUND), {
      method: "POST",
      headers: eventHeaders(body, key),
      body,
    });
    assert.equal(whole.status, 200, await whole.clone().text());
    assert.equal(whole.headers.get("connection"), "keep-alive");
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(body);
        controller.enqueue(bytes.subarray(0, 10));
        controller.enqueue(bytes.subarray(10));
        controller.close();
      },
    });
    const again = await fetch(url(INBOUND), {
      method: "POST",
      headers: eventHeaders(body, key),
      body: chunked,
      duplex: "half",
    } as RequestInit);
    assert.equal(again.status, 200, await again.clone().text());
    assert.equal(
      ((await again.json()) as { duplicate: boolean }).duplicate,
      true,
      "the same bytes, read in chunks",
    );
  });

  test("X-Request-Id: the client's when acceptable, else the framework's, else the core's", async () => {
    const get = (headers: Record<string, string>) =>
      fetch(url("/api/partner/products"), { headers: { "x-api-key": KEY, ...headers } });
    assert.equal(
      (await get({ "x-request-id": "trace-1", "x-framework-id": "req-7" })).headers.get("x-request-id"),
      "trace-1",
    );
    assert.equal((await get({ "x-framework-id": "req-7" })).headers.get("x-request-id"), "req-7");
    const secretLike = await get({ "x-request-id": "ypk_test_oops", "x-framework-id": "whsec_oops" });
    assert.match(secretLike.headers.get("x-request-id") ?? "", /^req_[0-9a-f]{12}/);
  });

  test("an oversized chunked body is 413 with Connection: close, and the socket is closed", async () => {
    const connection = await RawConnection.open(port);
    const body = eventBody();
    connection.write(
      requestHead("POST", INBOUND, { ...eventHeaders(body, "big"), "transfer-encoding": "chunked" }),
    );
    const chunk = "x".repeat(16_384);
    for (let i = 0; i < 8; i++) connection.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const res = await connection.response();
    assert.equal(res.status, 413, res.body);
    assert.equal(res.headers["connection"], "close");
    await connection.closed();
  });

  test("an unread body: kept and discarded when small, the connection closed when large or chunked", async () => {
    const small = await RawConnection.open(port);
    small.write(`${requestHead("POST", INBOUND, { "content-length": 5, "x-api-key": "" })}hello`);
    const first = await small.response();
    assert.equal(first.status, 401);
    assert.equal(first.headers["connection"], "keep-alive");
    small.write(requestHead("GET", "/api/partner/products", { "x-api-key": KEY }));
    assert.equal((await small.response()).status, 200, "the connection still serves");
    small.socket.destroy();

    const large = await RawConnection.open(port);
    large.write(`${requestHead("POST", INBOUND, { "content-length": 1_000_000, "x-api-key": "" })}{"a":`);
    const refused = await large.response();
    assert.equal(refused.status, 401);
    assert.equal(refused.headers["connection"], "close");
    await large.closed();
  });

  test("a body already read by a body parser is a 500 told to onError, never a wrong signature", async () => {
    steps.set("/parsed" + INBOUND, async (req) => {
      for await (const _ of req);
    });
    handlers.set("/parsed" + INBOUND, api);
    const body = eventBody();
    const res = await fetch(url(`/parsed${INBOUND}`), {
      method: "POST",
      headers: { ...eventHeaders(body, "parsed"), "x-request-id": "parsed-1" },
      body,
    });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("content-type"), "application/problem+json; charset=utf-8");
    const told = errors.find((e) => e.requestId === "parsed-1");
    assert.ok(told?.error instanceof BodyAlreadyReadError, String(told?.error));
    assert.match((told.error as Error).message, /express\.json\(\)/);
  });

  test("a handler that rejects is a 500 problem told to onError, with Connection: close", async () => {
    const broken = new Error("store exploded");
    handlers.set("/broken", { handle: () => Promise.reject(broken) });
    const connection = await RawConnection.open(port);
    connection.write(requestHead("GET", "/broken", {}));
    const body = assertProblem(await connection.response(), 500, "internal_error");
    assert.equal(errors.find((e) => e.requestId === body["request_id"])?.error, broken);
    await connection.closed();
  });

  test("the listener's protocol refusals apply: a Transfer-Encoding other than chunked is 400", async () => {
    const connection = await RawConnection.open(port);
    connection.write(
      requestHead("POST", INBOUND, { "x-api-key": KEY, "transfer-encoding": "gzip, chunked" }),
    );
    assertProblem(await connection.response(), 400, "invalid_body");
    await connection.closed();
  });
});
