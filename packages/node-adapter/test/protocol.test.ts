/**
 * HTTP/1.1 at the edge, over raw sockets: what node:http's parser refuses is answered in the
 * core's problem+json shape (CONTRACT §6, §9); a malformed body or a silent client ends its request
 * at once or at the request timeout; absolute-form targets are routed; CONNECT is refused.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  assertProblem,
  eventually,
  INBOUND,
  KEY,
  RawConnection,
  type RawResponse,
  requestHead,
  startTestServer,
} from "@partner-yield/node-adapter/testing";
import type { RequestLogEntry, RunningServer } from "../src/index.js";
import { splitTarget } from "../src/index.js";

/** Sends `data` on a new connection; the first answer, once the server has closed the connection. */
async function refusal(server: RunningServer, data: string | Buffer): Promise<RawResponse> {
  const conn = await RawConnection.open(server.port);
  conn.write(data);
  const res = await conn.response(2_000);
  await conn.closed();
  return res;
}

describe("malformed bodies and silent clients", () => {
  const entries: RequestLogEntry[] = [];
  let server: RunningServer;
  before(async () => {
    server = await startTestServer({
      log: (e) => e.msg === "request" && entries.push(e),
      timeouts: { headersTimeoutMs: 300, requestTimeoutMs: 600 },
    });
  });
  after(() => server.close());

  test("a malformed chunk ends the body: 400 invalid_body at once, the connection closes, nothing stays in flight", async () => {
    entries.length = 0;
    const conn = await RawConnection.open(server.port);
    const started = Date.now();
    conn.write(
      requestHead("POST", INBOUND, {
        "x-api-key": KEY,
        "content-type": "application/json",
        "transfer-encoding": "chunked",
      }),
    );
    conn.write("2\r\n{}\r\nzz\r\n");
    const res = await conn.response(2_000);
    assert.ok(Date.now() - started < 600, "answered before the request timeout");
    const body = assertProblem(res, 400, "invalid_body");
    assert.match(String(body["detail"]), /chunk size/);
    await conn.closed();
    await eventually(() => server.listener.inFlight === 0 && entries.length === 1, 1_000, "the request done");
    assert.equal(entries[0]!.status, 400);
  });

  test("a client that goes silent mid-body gets 408 request_timeout at the request timeout, not 400", async () => {
    entries.length = 0;
    const conn = await RawConnection.open(server.port);
    const started = Date.now();
    conn.write(
      requestHead("POST", INBOUND, {
        "x-api-key": KEY,
        "content-type": "application/json",
        "content-length": 100,
      }),
    );
    conn.write('{"a":1,');
    const res = await conn.response(3_000);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 500 && elapsed < 2_000, `answered after ${elapsed} ms`);
    assertProblem(res, 408, "request_timeout");
    await conn.closed();
    await eventually(() => server.listener.inFlight === 0 && entries.length === 1, 1_000, "the request done");
    assert.equal(entries[0]!.status, 408);
    assert.equal(entries[0]!.request_id, res.headers["x-request-id"]);
  });

  test("headers never finished: 408 request_timeout problem at the headers timeout", async () => {
    const conn = await RawConnection.open(server.port);
    const started = Date.now();
    conn.write("GET /api/partner/products HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const res = await conn.response(3_000);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 250 && elapsed < 1_500, `answered after ${elapsed} ms`);
    assertProblem(res, 408, "request_timeout");
    await conn.closed();
  });

  test("a malformed chunk does not hold up a shutdown (default timeouts)", async () => {
    const local = await startTestServer();
    const conn = await RawConnection.open(local.port);
    conn.write(
      requestHead("POST", INBOUND, {
        "x-api-key": KEY,
        "content-type": "application/json",
        "transfer-encoding": "chunked",
      }),
    );
    conn.write("2\r\n{}\r\n");
    await eventually(() => local.listener.inFlight === 1, 1_000, "the request to arrive");
    conn.write("zz\r\n");
    const started = Date.now();
    await local.close();
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 1_000, `shutdown took ${elapsed} ms`);
    assertProblem(await conn.response(100), 400, "invalid_body");
  });
});

describe("requests node:http cannot parse", () => {
  let server: RunningServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const cases: { name: string; data: string | Buffer; status: number; code: string }[] = [
    {
      name: "an unknown method",
      data: "FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
      status: 400,
      code: "invalid_parameter",
    },
    {
      name: "a lower-case method",
      data: "get /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
      status: 400,
      code: "invalid_parameter",
    },
    {
      name: "raw non-ASCII bytes in the target",
      data: Buffer.concat([
        Buffer.from("GET /caf"),
        Buffer.from([0xc3, 0xa9]),
        Buffer.from(" HTTP/1.1\r\nHost: x\r\n\r\n"),
      ]),
      status: 400,
      code: "invalid_parameter",
    },
    {
      name: "a header name with a space",
      data: "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n",
      status: 400,
      code: "invalid_parameter",
    },
    {
      name: "a duplicate Content-Length",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}`,
      status: 400,
      code: "invalid_body",
    },
    {
      name: "Content-Length with Transfer-Encoding",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      status: 400,
      code: "invalid_body",
    },
    {
      name: "two Content-Type headers",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${KEY}\r\nContent-Type: application/json\r\ncontent-type: text/plain\r\nContent-Length: 2\r\n\r\n{}`,
      status: 400,
      code: "invalid_parameter",
    },
    {
      name: "a 20 KB header",
      data: `GET /api/partner/products HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      status: 431,
      code: "headers_too_large",
    },
  ];
  for (const c of cases) {
    test(`${c.name} → ${c.status} ${c.code}, problem+json, connection closed`, async () => {
      assertProblem(await refusal(server, c.data), c.status, c.code);
    });
  }

  test("CONNECT → 405 method_not_allowed with Allow, connection closed", async () => {
    const res = await refusal(server, "CONNECT /api/partner/products HTTP/1.1\r\nHost: x\r\n\r\n");
    assertProblem(res, 405, "method_not_allowed");
    assert.equal(res.headers["allow"], "GET, HEAD, POST");
  });
});

describe("request targets (RFC 9112 §3.2)", () => {
  let server: RunningServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  async function get(target: string, method = "GET"): Promise<RawResponse> {
    const conn = await RawConnection.open(server.port);
    conn.write(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${KEY}\r\n\r\n`);
    const res = await conn.response();
    conn.socket.destroy();
    return res;
  }

  test("absolute-form is routed like origin-form: the API, its query, /healthz", async () => {
    const origin = await get("/api/partner/products");
    const absolute = await get("http://api.example/api/partner/products");
    assert.equal(absolute.status, 200, absolute.body);
    assert.deepEqual(JSON.parse(absolute.body), JSON.parse(origin.body));
    const calc = await get("http://127.0.0.1/api/partner/products/usdc-base-prime/yield-calc?amount=1000");
    assert.equal(calc.status, 200, calc.body);
    assert.equal(JSON.parse(calc.body).data.principal, "1000");
    for (const target of ["http://x/healthz", "HTTPS://x:8443/healthz?probe=1", "http://x/readyz"]) {
      assert.equal((await get(target)).status, 200, target);
    }
  });

  test("a target in neither form names no route: 404 not_found", async () => {
    for (const [method, target] of [
      ["OPTIONS", "*"],
      ["GET", "ftp://x/healthz"],
    ] as const) {
      const res = await get(target, method);
      assert.equal(res.status, 404, `${method} ${target}`);
      assert.equal(JSON.parse(res.body).code, "not_found");
    }
  });

  test("splitTarget keeps the path as sent", () => {
    assert.deepEqual(splitTarget("/a/b?c=1?d"), { path: "/a/b", query: "c=1?d" });
    assert.deepEqual(splitTarget("http://h/a/%2e%2e/b?x"), { path: "/a/%2e%2e/b", query: "x" });
    assert.deepEqual(splitTarget("http://user@h:80"), { path: "/", query: "" });
    assert.deepEqual(splitTarget("http://h?q=1"), { path: "/", query: "q=1" });
    assert.deepEqual(splitTarget("http://[::1"), { path: "http://[::1", query: "" });
    assert.deepEqual(splitTarget("h:80"), { path: "h:80", query: "" });
  });
});
