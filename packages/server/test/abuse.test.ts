/**
 * Abuse the server must survive (issue 10, the adapter's part), over raw sockets: connection caps
 * and crowding, pipelined requests cut by a reset, the client address of a reset connection,
 * secrets offered as request ids, the refusals node:http would answer bare (no Host, an unknown
 * Expect), unsupported transfer codings, and the request-smuggling shapes node's parser refuses.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { generateApiKey, type PlainRequest } from "@partner-yield/core";
import {
  createNodePartnerApi,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  defaultMaxConnections,
  logPath,
  type RequestLogEntry,
  type RunningServer,
} from "@partner-yield/node-adapter";
import {
  assertProblem,
  eventBody,
  eventHeaders,
  eventually,
  INBOUND,
  KEY,
  RawConnection,
  type RawResponse,
  requestHead,
  sleep,
  startTestServer,
} from "@partner-yield/node-adapter/testing";
import { parseCommandLine, UsageError } from "../src/cli-options.js";

const GENERATED_ID = /^req_[0-9a-f]{12}[0-9a-z]{6,}$/;

/** A TCP connection from `localAddress` (any 127.x.y.z works on Linux loopback). */
function openFrom(port: number, localAddress = "127.0.0.1"): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves true when the server closes `socket` within `ms`, false otherwise. */
function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.destroyed || socket.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    socket.once("close", done);
    socket.once("end", done);
    socket.on("error", () => undefined);
    socket.resume();
  });
}

describe("connection limits", () => {
  test("per address: connections beyond the cap are closed at once, other addresses still get in", async () => {
    const server = await startTestServer({
      connections: { maxConnections: 100, maxConnectionsPerAddress: 5 },
    });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 5; i++) sockets.push(await openFrom(server.port, "127.0.0.3"));
      const over = await openFrom(server.port, "127.0.0.3");
      sockets.push(over);
      assert.equal(await closedWithin(over, 1_000), true, "the 6th connection from one address is closed");
      for (const s of sockets.slice(0, 5)) assert.equal(s.destroyed, false);
      const other = await RawConnection.open(server.port);
      other.write(requestHead("GET", "/api/partner/products", { "x-api-key": KEY }));
      assert.equal((await other.response()).status, 200);
      other.socket.destroy();
      assert.equal(server.connections.refused, 1);
    } finally {
      for (const s of sockets) s.destroy();
      await server.close();
    }
  });

  test("at the global cap a new connection closes the longest-idle one; with none idle it is refused", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await startTestServer({
      connections: { maxConnections: 4, maxConnectionsPerAddress: 100 },
      wrap: (api) => ({
        handle: async (req: PlainRequest) => {
          if (req.path.endsWith("/slow")) await held;
          return api.handle(req);
        },
      }),
    });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 4; i++) sockets.push(await openFrom(server.port, `127.0.1.${i + 1}`));
      await eventually(() => server.connections.open === 4, 2_000, "four connections open");
      // A fifth connection: the first (idle longest) is closed to make room.
      const fifth = await openFrom(server.port, "127.0.1.5");
      assert.equal(await closedWithin(sockets[0]!, 1_000), true, "the longest-idle connection is closed");
      assert.equal(fifth.destroyed, false);
      sockets[0] = fifth;
      // Every connection busy with a request: a new one is refused.
      for (const s of sockets)
        s.write(requestHead("GET", "/api/partner/products/slow", { "x-api-key": KEY }));
      await eventually(() => server.listener.inFlight === 4, 2_000, "four requests in flight");
      const refused = await openFrom(server.port, "127.0.1.6");
      assert.equal(await closedWithin(refused, 1_000), true, "a connection beyond the cap is closed");
      for (const s of sockets) assert.equal(s.destroyed, false, "busy connections are kept");
      assert.equal(server.connections.refused, 1);
      assert.equal(server.connections.evicted, 1);
    } finally {
      release();
      for (const s of sockets) s.destroy();
      await server.close();
    }
  });

  test("a connection that just finished a request is the most recently idle: eviction takes the next oldest", async () => {
    const server = await startTestServer({
      connections: { maxConnections: 4, maxConnectionsPerAddress: 100 },
    });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 4; i++) sockets.push(await openFrom(server.port, `127.0.2.${i + 1}`));
      await eventually(() => server.connections.open === 4, 2_000, "four connections open");
      // The oldest connection serves two requests, one after the other; it is then idle again, the
      // most recently. (Four open is crowded here, where a /healthz answer closes its connection.)
      for (let i = 0; i < 2; i++) {
        const answered = new Promise<string>((resolve) =>
          sockets[0]!.once("data", (d: Buffer) => resolve(d.toString())),
        );
        sockets[0]!.write(requestHead("GET", "/api/partner/products/usdc-base-prime", { "x-api-key": KEY }));
        assert.match(await answered, /^HTTP\/1\.1 200/);
        await eventually(() => server.listener.inFlight === 0, 2_000, "the request done");
      }
      sockets.push(await openFrom(server.port, "127.0.2.5"));
      assert.equal(
        await closedWithin(sockets[1]!, 1_000),
        true,
        "the second connection, now idle longest, is closed",
      );
      assert.equal(sockets[0]!.destroyed, false, "the one that just served a request is kept");
      sockets.push(await openFrom(server.port, "127.0.2.6"));
      assert.equal(await closedWithin(sockets[2]!, 1_000), true, "then the third");
      assert.equal(sockets[0]!.destroyed, false);
      assert.equal(server.connections.evicted, 2);
    } finally {
      for (const s of sockets) s.destroy();
      await server.close();
    }
  });

  test("crowded: idle connections close after the crowded idle timeout, /healthz and 401 answers close", async () => {
    const server = await startTestServer({
      connections: { maxConnections: 8, maxConnectionsPerAddress: 100, crowdedIdleTimeoutMs: 200 },
    });
    const conns: RawConnection[] = [];
    try {
      const calm = await RawConnection.open(server.port);
      calm.write(requestHead("GET", "/healthz", {}));
      const calmAnswer = await calm.response();
      assert.equal(calmAnswer.headers["connection"], "keep-alive", "not crowded: kept alive");
      conns.push(calm);
      // 8 of 8: crowded (from 6), and still once the probe and the keyless request have closed
      // theirs (6): the sweep runs only while crowded, and the server's own timeouts are a minute.
      for (let i = 0; i < 7; i++) conns.push(await RawConnection.open(server.port));
      await eventually(() => server.connections.crowded, 2_000, "crowded");
      const probe = conns[1]!;
      probe.write(requestHead("GET", "/healthz", {}));
      assert.equal((await probe.response()).headers["connection"], "close");
      const keyless = conns[2]!;
      keyless.write(requestHead("GET", "/api/partner/products", {}));
      const refused = await keyless.response();
      assert.equal(refused.status, 401);
      assert.equal(refused.headers["connection"], "close");
      // The idle ones are closed within the crowded idle timeout (plus the sweep's period).
      await Promise.all(conns.map((c) => c.closed()));
    } finally {
      for (const c of conns) c.socket.destroy();
      await server.close();
    }
  });
});

describe("connection flags", () => {
  const config = (args: string[], env: Record<string, string> = {}) => {
    const command = parseCommandLine(["serve", ...args], env);
    assert.equal(command.command, "serve");
    return command.config.connections;
  };

  test("defaults, flags and variables", () => {
    assert.deepEqual(config([]), {
      maxConnections: undefined,
      maxConnectionsPerAddress: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
      crowdedIdleTimeoutMs: 5000,
      ipv6PrefixLength: 64,
    });
    assert.deepEqual(
      config([
        "--max-connections",
        "900",
        "--max-connections-per-address",
        "9",
        "--crowded-idle-timeout",
        "700",
      ]),
      { maxConnections: 900, maxConnectionsPerAddress: 9, crowdedIdleTimeoutMs: 700, ipv6PrefixLength: 64 },
    );
    assert.equal(config([], { PARTNER_YIELD_MAX_CONNECTIONS: "1234" }).maxConnections, 1234);
    assert.throws(() => config(["--max-connections", "0"]), UsageError);
    assert.throws(() => config(["--max-connections-per-address", "x"]), UsageError);
    // Three quarters of this process's open-files limit.
    assert.ok(defaultMaxConnections() >= 64);
  });
});

describe("pipelined requests cut by a reset", () => {
  test("nothing stays in flight, every request gets its log line, shutdown has nothing to wait for", async () => {
    const entries: RequestLogEntry[] = [];
    let received = 0;
    const server = await startTestServer({
      log: (e) => e.msg === "request" && entries.push(e),
      timeouts: { shutdownTimeoutMs: 5_000 },
    });
    server.server.on("request", () => received++);
    const socket = await openFrom(server.port);
    socket.pause(); // never read: the answers queue up on the server
    const one = requestHead("GET", "/api/partner/products", { "x-api-key": KEY });
    socket.write(one.repeat(2_000));
    await eventually(() => received > 50, 5_000, "requests parsed");
    await sleep(200);
    socket.resetAndDestroy();
    await eventually(() => server.listener.inFlight === 0, 3_000, "no request in flight");
    await eventually(() => entries.length === received, 3_000, "a log line per request");
    // Shutdown has nothing to wait for (before the fix it waited its whole timeout, then cut).
    assert.equal(await server.listener.whenIdle(1), true);
    await server.close();
  });
});

describe("the client address of a connection reset right after its request", () => {
  test("is the address the connection was accepted from", async () => {
    const seen: (string | undefined)[] = [];
    const server = await startTestServer({
      wrap: (api) => ({
        handle: (req: PlainRequest) => {
          seen.push(req.clientAddress);
          return api.handle(req);
        },
      }),
    });
    try {
      for (let i = 0; i < 30; i++) {
        const socket = await openFrom(server.port, "127.0.0.7");
        socket.on("error", () => undefined);
        socket.write(requestHead("GET", "/api/partner/products", { "x-api-key": "ypk_test_wrong" }));
        socket.resetAndDestroy();
      }
      await eventually(() => seen.length > 0, 2_000, "requests reached the core");
      await sleep(100);
      assert.deepEqual(
        seen.filter((a) => a !== "127.0.0.7"),
        [],
      );
    } finally {
      await server.close();
    }
  });
});

describe("secrets offered as request ids, and in the path", () => {
  const entries: RequestLogEntry[] = [];
  let server: RunningServer;
  before(async () => {
    // Health probes too: their lines must be as clean as any other.
    server = await startTestServer({
      logHealthChecks: true,
      log: (e) => e.msg === "request" && entries.push(e),
    });
  });
  after(() => server.close());

  for (const secret of [
    generateApiKey("sandbox"),
    generateApiKey("production"),
    "whsec_abcdefghijklmnopqrstuvwxyz012345",
    "trace-YPK_TEST_abc",
  ]) {
    test(`X-Request-Id ${secret.slice(0, 10)}… is replaced by a generated id, echoed and logged nowhere`, async () => {
      entries.length = 0;
      for (const path of ["/api/partner/products", "/healthz", "/nope"]) {
        const conn = await RawConnection.open(server.port);
        conn.write(requestHead("GET", path, { "x-api-key": KEY, "x-request-id": secret }));
        const res = await conn.response();
        conn.socket.destroy();
        assert.match(res.headers["x-request-id"] ?? "", GENERATED_ID);
        assert.ok(!res.body.includes(secret), "not in the body");
      }
      await eventually(() => entries.length === 3, 2_000, "three log lines");
      assert.ok(!JSON.stringify(entries).includes(secret), "not in the log");
    });
  }

  test("the core replaces an embedder's request id that looks like a secret", async () => {
    const api = createNodePartnerApi({ log: "none" });
    const key = generateApiKey("sandbox");
    const res = await api.handle({
      method: "GET",
      path: "/api/partner/products",
      headers: {},
      requestId: key,
    });
    assert.match(res.headers["x-request-id"]!, GENERATED_ID);
    assert.ok(!String(res.body).includes(key));
    const fine = await api.handle({
      method: "GET",
      path: "/api/partner/products",
      headers: {},
      requestId: "t-1",
    });
    assert.equal(fine.headers["x-request-id"], "t-1");
    await api.close();
  });

  test("a percent-encoded key in the path is masked in the log", async () => {
    const key = generateApiKey("sandbox");
    const encoded = `/api/partner/products/${key.replace(/_/g, "%5F")}`;
    const lower = `/api/partner/products/${key.replace(/_/g, "%5f").replace("y", "%79")}`;
    for (const path of [encoded, lower]) {
      const logged = logPath(path);
      assert.ok(!logged.includes(key.slice(9)), logged);
      assert.match(logged, /\[redacted\]/);
    }
    assert.equal(logPath("/api/partner/products/a%20b"), "/api/partner/products/a%20b");
    assert.equal(logPath("/api/partner/products/%E0%A4%A"), "/api/partner/products/%E0%A4%A");
  });
});

describe("refusals node:http would answer bare", () => {
  const entries: RequestLogEntry[] = [];
  let server: RunningServer;
  before(async () => {
    // Health probes too: their lines must be as clean as any other.
    server = await startTestServer({
      logHealthChecks: true,
      log: (e) => e.msg === "request" && entries.push(e),
    });
  });
  after(() => server.close());

  async function exchange(data: string): Promise<RawResponse> {
    const conn = await RawConnection.open(server.port);
    conn.write(data);
    const res = await conn.response(2_000);
    await conn.closed();
    return res;
  }

  test("HTTP/1.1 without Host → 400 invalid_parameter problem+json, logged, connection closed", async () => {
    entries.length = 0;
    for (const path of ["/api/partner/products", "/healthz"]) {
      const res = await exchange(`GET ${path} HTTP/1.1\r\nX-Api-Key: ${KEY}\r\n\r\n`);
      const body = assertProblem(res, 400, "invalid_parameter");
      assert.match(String(body["detail"]), /Host/);
    }
    await eventually(() => entries.length === 2, 2_000, "logged");
    assert.deepEqual(
      entries.map((e) => e.status),
      [400, 400],
    );
    // HTTP/1.0 needs no Host.
    const old = await exchange("GET /healthz HTTP/1.0\r\n\r\n");
    assert.equal(old.status, 200);
  });

  test("an Expect other than 100-continue → 400 invalid_parameter problem+json, logged", async () => {
    entries.length = 0;
    const res = await exchange(
      requestHead("GET", "/api/partner/products", { "x-api-key": KEY, expect: "foo" }),
    );
    const body = assertProblem(res, 400, "invalid_parameter");
    assert.match(String(body["detail"]), /Expect/);
    await eventually(() => entries.length === 1, 2_000, "logged");
    assert.equal(entries[0]!.status, 400);
  });

  test("Transfer-Encoding other than chunked alone → 400 invalid_body, nothing stored, connection closed", async () => {
    entries.length = 0;
    const before = (await server.api.events.list(0, 100_000)).length;
    const body = eventBody();
    const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    for (const coding of ["gzip, chunked", "identity, chunked", "deflate,chunked"]) {
      const headers: Record<string, string> = {
        ...eventHeaders(body, `k-te-${coding}`),
        "transfer-encoding": coding,
      };
      const res = await exchange(requestHead("POST", INBOUND, headers) + chunked);
      const problem = assertProblem(res, 400, "invalid_body");
      assert.match(String(problem["detail"]), /Transfer-Encoding/);
    }
    assert.equal((await server.api.events.list(0, 100_000)).length, before);
    await eventually(() => entries.length === 3, 2_000, "logged");
  });
});

describe("request smuggling shapes are refused, the smuggled request never answered", () => {
  let server: RunningServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  const cases: { name: string; data: string; code: string }[] = [
    {
      name: "Content-Length and Transfer-Encoding",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
      code: "invalid_body",
    },
    {
      name: "two Content-Length headers",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 40\r\n\r\n${smuggled}`,
      code: "invalid_body",
    },
    {
      name: "a Content-Length list",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nContent-Length: 0, 40\r\n\r\n${smuggled}`,
      code: "invalid_body",
    },
    {
      name: "Transfer-Encoding twice",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
      code: "invalid_body",
    },
    {
      name: "chunked not last",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n${smuggled}`,
      code: "invalid_body",
    },
    {
      name: "obsolete line folding",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nX-Note: a\r\n Content-Length: 40\r\n\r\n${smuggled}`,
      code: "invalid_parameter",
    },
    {
      name: "whitespace before the colon",
      data: `POST ${INBOUND} HTTP/1.1\r\nHost: x\r\nContent-Length : 40\r\n\r\n${smuggled}`,
      code: "invalid_parameter",
    },
  ];
  for (const c of cases) {
    test(`${c.name} → 400 ${c.code}, and nothing after it is answered`, async () => {
      const conn = await RawConnection.open(server.port);
      conn.write(c.data);
      const res = await conn.response(2_000);
      assertProblem(res, 400, c.code);
      await conn.closed();
      await assert.rejects(conn.response(100), /connection closed; unparsed: ""/);
    });
  }
});
