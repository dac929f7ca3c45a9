/**
 * `--max-events` and `--max-event-bytes` (issue 10): parsed with their environment variables, refused
 * with `--database-url`, and the bound they set is the one the served store applies.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_EVENTS, MemoryEventStore } from "@partner-yield/core";
import { createNodePartnerApi, DEFAULT_FIXTURES_DIR } from "@partner-yield/node-adapter";
import { eventHeaders, INBOUND } from "@partner-yield/node-adapter/testing";
import { openBackends } from "../src/backends.js";
import { defaultMaxEventBytes, parseCommandLine, UsageError } from "../src/cli-options.js";

function serveConfig(argv: string[], env: Record<string, string> = {}) {
  const command = parseCommandLine(["serve", ...argv], env);
  assert.equal(command.command, "serve");
  return command.config;
}

test("the flags, their variables and their defaults", () => {
  assert.equal(serveConfig([]).maxEvents, DEFAULT_MAX_EVENTS);
  assert.equal(serveConfig([]).maxEventBytes, defaultMaxEventBytes());
  assert.equal(defaultMaxEventBytes(4 * 1024 ** 3), DEFAULT_MAX_EVENT_BYTES);
  assert.equal(defaultMaxEventBytes(128 * 1024 ** 2), 64 * 1024 ** 2, "half a 128 MiB heap");
  assert.equal(serveConfig(["--max-events", "5"]).maxEvents, 5);
  assert.equal(serveConfig([], { PARTNER_YIELD_MAX_EVENTS: "7" }).maxEvents, 7);
  assert.equal(serveConfig(["--max-events", "9"], { PARTNER_YIELD_MAX_EVENTS: "7" }).maxEvents, 9);
  assert.equal(serveConfig([], { PARTNER_YIELD_MAX_EVENT_BYTES: "1048576" }).maxEventBytes, 1_048_576);
  for (const bad of ["0", "-1", "1.5", "x", "1e6"]) {
    assert.throws(() => serveConfig(["--max-events", bad]), UsageError, bad);
    assert.throws(() => serveConfig(["--max-event-bytes", bad]), UsageError, bad);
  }
  assert.throws(
    () => serveConfig(["--max-events", "5", "--database-url", "postgres://127.0.0.1/x"]),
    /--max-events bounds the in-memory event store/,
  );
  assert.throws(
    () => serveConfig([], { PARTNER_YIELD_MAX_EVENT_BYTES: "100", DATABASE_URL: "postgres://127.0.0.1/x" }),
    /PARTNER_YIELD_MAX_EVENT_BYTES bounds the in-memory event store/,
  );
});

test("the served in-memory store has the bound of the flags", async () => {
  const backends = await openBackends({
    fixturesDir: DEFAULT_FIXTURES_DIR,
    databaseUrl: undefined,
    redisUrl: undefined,
    maxEvents: 1,
  });
  assert.ok(backends.events instanceof MemoryEventStore);
  assert.match(backends.description[0]!, /at most 1 events/);
  const { banner: _b, description: _d, readinessChecks: _r, priceTable: _p, ...stores } = backends;
  const api = createNodePartnerApi({ ...stores, log: "none" });
  const send = (n: number) => {
    const body = new TextEncoder().encode(
      `{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"n":${n}}}`,
    );
    return api.handle({
      method: "POST",
      path: INBOUND,
      headers: eventHeaders(body, `k${n}`),
      body,
      clientAddress: "127.0.0.1",
    });
  };
  assert.equal((await send(1)).status, 200);
  const full = await send(2);
  assert.equal(full.status, 503);
  assert.equal(JSON.parse(full.body!).code, "event_store_full");
  assert.equal((await send(1)).status, 200, "the stored event's duplicate");
  await api.close();
});
