/**
 * The baseline: a bare node:http server that answers every request with the bytes our server
 * gave for the scenario (same status, headers and body), with a fresh `x-request-id` of the same
 * shape and the `ratelimit` count going down, node's own Date/Connection/Keep-Alive, and the same
 * keep-alive timeout. For the POST scenario it reads the body and runs `JSON.parse` on it. No
 * authentication, no limiter, no log: the floor a node:http server can reach on this machine.
 * With `workMicros` (the runner's `--calibrate`), it also spins that long on the clock before each
 * answer: what a given amount of handler CPU costs in req/s on this machine. With `batched` (the
 * runner's `--batched-bare`), the requests read in one turn of the event loop are answered
 * together after that turn's reads (`setImmediate`), each after one promise hop, as our listener
 * hands them to the core and answers when the handler's promise settles. With `durable` (the
 * runner's `--durable-bare`), each POST is answered only once its body is committed to
 * PostgreSQL (durable-bodies.ts), or with a 503 when the insert fails.
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { exitOnSigterm, rateLimitHeader, readSpec, requestIds } from "./common.js";
import { durableBodies } from "./durable-bodies.js";

const spec = readSpec();
const { status, body } = spec.response;
const { "x-request-id": _id, ratelimit, ...fixed } = spec.response.headers;
const nextId = requestIds();
const nextRateLimit = rateLimitHeader(ratelimit);
const length = Buffer.byteLength(body);
const workMs = (spec.workMicros ?? 0) / 1000;
const commit = spec.durable === undefined ? undefined : await durableBodies(spec.durable);

/** Busy work of `workMs` milliseconds: the clock is read in a loop, nothing is allocated. */
function work(): void {
  const until = performance.now() + workMs;
  while (performance.now() < until) {
    // spin
  }
}

function answer(res: ServerResponse): void {
  if (workMs > 0) work();
  const headers: Record<string, string | number> = { ...fixed, "x-request-id": nextId() };
  if (nextRateLimit !== undefined) headers["ratelimit"] = nextRateLimit();
  headers["content-length"] = length;
  res.writeHead(status, headers);
  res.end(body);
}

/** Requests read in this turn of the event loop (`batched` only). */
let queued: [IncomingMessage, ServerResponse][] = [];

function answerQueued(): void {
  const batch = queued;
  queued = [];
  for (const [req, res] of batch) void Promise.resolve(req).then(() => handle(req, res));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  // The runner's readiness probe is a GET: only a POST carries the event.
  if (!spec.readsBody || req.method !== "POST") {
    answer(res);
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    JSON.parse(text);
    if (commit === undefined) {
      answer(res);
      return;
    }
    commit(text).then(
      () => answer(res),
      () => res.writeHead(503, { "content-length": 0 }).end(),
    );
  });
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  if (spec.batched !== true) {
    handle(req, res);
    return;
  }
  queued.push([req, res]);
  if (queued.length === 1) setImmediate(answerQueued);
});
server.listen(spec.port, "127.0.0.1");
exitOnSigterm(() => server.closeAllConnections());
