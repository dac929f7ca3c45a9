/**
 * Every 5xx is logged with its cause (CONTRACT §6): one JSON line with level "error", msg
 * "unexpected_error" (500) or "service_unavailable" (503: a store down, a missing USD price), the
 * request id, the status and the error's name, message, stack and cause, never the request's
 * headers or body; on stderr for `log: "json"`, to a log function, and not at all for `log: "none"`.
 */
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import {
  MemoryEventStore,
  MemoryPriceSource,
  type NewEvent,
  type PlainRequest,
  StoreUnavailableError,
} from "@partner-yield/core";
import {
  DEMO,
  eventBody,
  eventHeaders,
  INBOUND,
  KEY,
  startTestServer,
} from "@partner-yield/node-adapter/testing";
import { Client } from "undici";
import { DEFAULT_FIXTURES_DIR, loadFixtureDir } from "../src/fixture-dir.js";
import type { ErrorLogEntry, LogEntry } from "../src/index.js";
import { createNodePartnerApi } from "../src/index.js";

/** An event store that fails the way a bug would (not `StoreUnavailableError`, which is a 503). */
class BrokenStore extends MemoryEventStore {
  override append(_event: NewEvent): never {
    throw new TypeError("the store exploded");
  }
}

const BODY = eventBody("u_secret_payload");
const EVENT: PlainRequest = {
  method: "POST",
  path: INBOUND,
  query: "",
  headers: eventHeaders(BODY, "k-error-log"),
  body: () => Promise.resolve(new TextEncoder().encode(BODY)),
  clientAddress: "127.0.0.1",
};

/** What the line must never hold: the key, the signature, the body. */
function assertNoRequestData(text: string): void {
  for (const secret of [KEY, EVENT.headers["x-partner-signature"]!, "u_secret_payload", "k-error-log"]) {
    assert.ok(!text.includes(secret), `the error log contains ${secret}`);
  }
}

let restoreStderr: (() => void) | undefined;
afterEach(() => restoreStderr?.());

/** Captures what is written to stderr until the test ends. */
function captureStderr(): string[] {
  const lines: string[] = [];
  const original = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  restoreStderr = () => {
    process.stderr.write = original;
    restoreStderr = undefined;
  };
  return lines;
}

test('log: "json" (the default): a 500 of the core writes one error line on stderr', async () => {
  const api = createNodePartnerApi({ events: new BrokenStore() });
  const stderr = captureStderr();
  const res = await api.handle(EVENT);
  restoreStderr!();
  assert.equal(res.status, 500);
  assert.equal(stderr.length, 1, stderr.join(""));
  assert.ok(stderr[0]!.endsWith("\n"));
  const line = JSON.parse(stderr[0]!) as ErrorLogEntry;
  assert.equal(line.level, "error");
  assert.equal(line.msg, "unexpected_error");
  assert.equal(line.request_id, res.headers["x-request-id"]);
  assert.equal(line.error.name, "TypeError");
  assert.equal(line.error.message, "the store exploded");
  assert.match(line.error.stack ?? "", /BrokenStore\.append/);
  assert.ok(!Number.isNaN(Date.parse(line.time)));
  assertNoRequestData(stderr[0]!);
  assert.ok(!res.body!.includes("exploded"), "the answer shows no details");
});

test('log: "json": a store that is down (503) writes one error line with its cause on stderr', async () => {
  class DownStore extends MemoryEventStore {
    override append(_event: NewEvent): Promise<never> {
      const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
      return Promise.reject(new StoreUnavailableError("postgres: connection refused", 2, { cause }));
    }
  }
  const api = createNodePartnerApi({ events: new DownStore() });
  const stderr = captureStderr();
  const res = await api.handle(EVENT);
  restoreStderr!();
  assert.equal(res.status, 503);
  assert.equal(res.headers["retry-after"], "2");
  assert.equal(stderr.length, 1, stderr.join(""));
  const line = JSON.parse(stderr[0]!) as ErrorLogEntry;
  assert.equal(line.level, "error");
  assert.equal(line.msg, "service_unavailable");
  assert.equal(line.status, 503);
  assert.equal(line.request_id, res.headers["x-request-id"]);
  assert.equal(line.error.name, "StoreUnavailableError");
  assert.equal(line.error.message, "postgres: connection refused");
  assert.deepEqual(line.error.cause, { name: "Error", message: "connect ECONNREFUSED 127.0.0.1:5432" });
  assertNoRequestData(stderr[0]!);
  assert.ok(!res.body!.includes("postgres"), "the answer shows no details");
});

test("over a server: a position whose asset has no USD price (503) is logged with the asset", async () => {
  const entries: LogEntry[] = [];
  const data = { ...loadFixtureDir(DEFAULT_FIXTURES_DIR), prices: new MemoryPriceSource([]) };
  const server = await startTestServer({ data, log: (e) => entries.push(e) });
  try {
    const res = await fetch(
      `${server.url}/api/partner/products/usdc-base-prime/position?address=${DEMO.walletWithPositions}`,
      { headers: { "x-api-key": KEY } },
    );
    assert.equal(res.status, 503, await res.text());
    const errors = entries.filter((e): e is ErrorLogEntry => e.msg === "service_unavailable");
    assert.equal(errors.length, 1, JSON.stringify(entries));
    assert.equal(errors[0]!.request_id, res.headers.get("x-request-id"));
    assert.equal(errors[0]!.status, 503);
    assert.match(errors[0]!.error.message, /^no USD price is available for USDC \(chain 8453, asset 0x/);
  } finally {
    await server.close();
  }
});

test('log: "none": a 500 is still answered, and nothing is logged', async () => {
  const api = createNodePartnerApi({ events: new BrokenStore(), log: "none" });
  const stderr = captureStderr();
  const res = await api.handle(EVENT);
  restoreStderr!();
  assert.equal(res.status, 500);
  assert.deepEqual(stderr, []);
});

test("over a server: the core's 500 and a handler that rejects are both logged to the log function", async () => {
  const entries: LogEntry[] = [];
  const api = createNodePartnerApi({ events: new BrokenStore(), log: (e) => entries.push(e) });
  const server = await startTestServer({
    api,
    log: (e) => entries.push(e),
    wrap: (inner) => ({
      handle: (req) =>
        req.path === "/api/partner/products"
          ? Promise.reject(new RangeError("handler bug"))
          : inner.handle(req),
    }),
  });
  const client = new Client(server.url);
  try {
    const event = await client.request({ method: "POST", path: INBOUND, headers: EVENT.headers, body: BODY });
    assert.equal(event.statusCode, 500);
    await event.body.text();
    const list = await client.request({
      method: "GET",
      path: "/api/partner/products",
      headers: { "x-api-key": KEY },
    });
    assert.equal(list.statusCode, 500);
    assert.equal(((await list.body.json()) as { code: string }).code, "internal_error");

    const errors = entries.filter((e): e is ErrorLogEntry => e.msg === "unexpected_error");
    assert.deepEqual(
      errors.map((e) => [e.request_id, e.error.name, e.error.message]),
      [
        [event.headers["x-request-id"], "TypeError", "the store exploded"],
        [list.headers["x-request-id"], "RangeError", "handler bug"],
      ],
    );
    assert.ok(errors.every((e) => e.level === "error" && (e.error.stack ?? "").length > 0));
    const requests = entries.filter((e) => e.msg === "request");
    assert.deepEqual(
      requests.map((e) => e.status),
      [500, 500],
    );
    assertNoRequestData(JSON.stringify(errors));
  } finally {
    await client.close();
    await server.close();
  }
});

test('a server with log: "none" does not log a rejecting handler\'s error', async () => {
  const server = await startTestServer({
    log: "none",
    handler: { handle: () => Promise.reject(new Error("quiet")) },
  });
  const stderr = captureStderr();
  try {
    const res = await fetch(`${server.url}/api/partner/products`);
    assert.equal(res.status, 500);
    await res.text();
  } finally {
    restoreStderr?.();
    await server.close();
  }
  assert.deepEqual(stderr, []);
});
