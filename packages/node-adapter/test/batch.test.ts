/**
 * The listener hands the requests node:http reads in one turn of the event loop to the core
 * together, after the reads: the core sees them one after another with nothing run in between,
 * each is answered on its own connection, and a handler that throws fails only its own request.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import type { PartnerApiHandler, PlainRequest, PlainResponse } from "@partner-yield/core";
import { eventually, RawConnection, requestHead } from "@partner-yield/node-adapter/testing";
import { createListener, type LogEntry } from "../src/index.js";

interface Call {
  readonly path: string;
  /** Whether a microtask queued by the previous call had run when this call came. */
  readonly afterPreviousMicrotask: boolean;
}

const calls: Call[] = [];
const logged: LogEntry[] = [];
let previousMicrotaskRan = true;

/** A core stand-in: answers its path as the body; `/throw` throws at once, as a bug would. */
const api: PartnerApiHandler = {
  handle(request: PlainRequest): Promise<PlainResponse> {
    calls.push({ path: request.path, afterPreviousMicrotask: previousMicrotaskRan });
    previousMicrotaskRan = false;
    queueMicrotask(() => {
      previousMicrotaskRan = true;
    });
    if (request.path === "/throw") throw new Error("a handler bug");
    return Promise.resolve({
      status: 200,
      headers: { "content-type": "text/plain", "x-request-id": `req_${request.path.slice(1)}` },
      body: request.path,
    });
  },
};

let server: Server;
let port = 0;
let accepted = 0;

before(async () => {
  server = createServer(createListener(api, { log: (entry) => logged.push(entry) }));
  server.on("connection", () => accepted++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Holds this process's event loop for `ms`, so what the clients sent meanwhile is read in one turn. */
function holdEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the requests arrive in the server's socket buffers meanwhile
  }
}

test("requests read in one turn reach the core together, and a throwing handler fails only its own", async () => {
  const paths = ["/first", "/throw", "/third"];
  const connections = await Promise.all(paths.map(() => RawConnection.open(port)));
  // Every connection accepted and read by node:http before the requests are sent.
  await eventually(() => accepted === paths.length, 5_000, "the three connections accepted");
  calls.length = 0;
  logged.length = 0;
  for (const [i, connection] of connections.entries()) connection.write(requestHead("GET", paths[i]!, {}));
  holdEventLoop(50);

  const responses = await Promise.all(connections.map((connection) => connection.response()));

  assert.deepEqual(calls.map((c) => c.path).sort(), [...paths].sort(), "the core saw each request once");
  assert.deepEqual(
    calls.slice(1).map((c) => c.afterPreviousMicrotask),
    [false, false],
    "the core got the second and third request before anything queued by the first one ran",
  );
  assert.equal(responses[0]!.status, 200);
  assert.equal(responses[0]!.body, "/first");
  assert.equal(responses[1]!.status, 500);
  assert.equal(JSON.parse(responses[1]!.body).code, "internal_error");
  assert.equal(responses[1]!.headers["connection"], "close");
  assert.equal(responses[2]!.status, 200);
  assert.equal(responses[2]!.body, "/third");

  for (const connection of connections) connection.socket.end();
  const requestLines = () => logged.filter((e) => e.msg === "request").length;
  await eventually(() => requestLines() === 3, 5_000, "three request lines");
  const lines = logged.filter((e) => e.msg === "request").map((e) => `${e.path} ${e.status}`);
  assert.deepEqual(lines.sort(), ["/first 200", "/third 200", "/throw 500"], "one request line each");
  const errors = logged.filter((e) => e.msg === "unexpected_error");
  assert.equal(errors.length, 1, "the handler's error is logged once");
});

test("pipelined requests on one connection are answered in the order sent", async () => {
  const connection = await RawConnection.open(port);
  const paths = ["/p1", "/p2", "/p3", "/p4"];
  connection.write(paths.map((path) => requestHead("GET", path, {})).join(""));
  const bodies: string[] = [];
  for (const _ of paths) bodies.push((await connection.response()).body);
  assert.deepEqual(bodies, paths);
  connection.socket.end();
});
