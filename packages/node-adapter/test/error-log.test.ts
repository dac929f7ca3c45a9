/**
 * Unexpected errors (answered 500 internal_error, CONTRACT §6) are logged: one JSON line with level
 * "error", the request id and the error's name, message and stack, never the request's headers or
 * body; on stderr for `log: "json"`, to a log function, and not at all for `log: "none"`.
 */
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { MemoryEventStore, type NewEvent, type PlainRequest } from "@partner-yield/core";
import { Client } from "undici";
import type { ErrorLogEntry, LogEntry } from "../src/index.js";
import { createNodePartnerApi } from "../src/index.js";
import { eventBody, eventHeaders, INBOUND, KEY, startTestServer } from "./support.js";

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
