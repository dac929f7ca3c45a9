/**
 * What the log tells an on-call engineer (issue 27, logs): each request line's level by outcome
 * (5xx error, 4xx warn, else info), with its error code, partner, key id (never the key), client
 * address, bytes and instance; health probes left out unless asked; a cause's stack once a minute,
 * the ones left out counted in its next line; one line when a store goes down, one when it is back.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  generateApiKey,
  hashApiKey,
  MemoryEventStore,
  MemoryPartnerAdmin,
  MemoryPriceSource,
  type NewEvent,
  StoreUnavailableError,
} from "@partner-yield/core";
import {
  createNodePartnerApi,
  DEFAULT_FIXTURES_DIR,
  type ErrorLogEntry,
  type LogEntry,
  loadFixtureDir,
  type RequestLogEntry,
  resolveErrorLog,
  STACK_WINDOW_MS,
  type StoreLogEntry,
  setLogInstance,
} from "@partner-yield/node-adapter";
import {
  DEMO,
  eventBody,
  eventHeaders,
  INBOUND,
  KEY,
  startTestServer,
} from "@partner-yield/node-adapter/testing";
import { serverLogEntry, watchStores } from "../src/index.js";

const PRODUCTS = "/api/partner/products";

function requests(entries: LogEntry[]): RequestLogEntry[] {
  return entries.filter((e): e is RequestLogEntry => e.msg === "request");
}

/** The fixtures' stores behind an admin store, so keys have ids as `keys list` shows them. */
function adminData() {
  const data = loadFixtureDir(DEFAULT_FIXTURES_DIR);
  const admin = new MemoryPartnerAdmin({ partners: data.partnerList, keys: data.keyRecords });
  return { data, admin };
}

describe("request lines", () => {
  test("three different 401s are told apart by code, at level warn; a served request is info with partner and key id", async () => {
    const entries: LogEntry[] = [];
    const { data, admin } = adminData();
    const api = createNodePartnerApi({ data, keys: admin.keys, partners: admin.partners, log: "none" });
    setLogInstance("test-instance-1");
    const server = await startTestServer({ api, log: (e) => entries.push(e) });
    try {
      const ask = async (headers: Record<string, string>) => {
        const res = await fetch(`${server.url}${PRODUCTS}`, { headers });
        await res.text();
        return res.status;
      };
      assert.equal(await ask({}), 401);
      assert.equal(await ask({ "x-api-key": generateApiKey("sandbox") }), 401);
      assert.equal(await ask({ "x-api-key": generateApiKey("production") }), 401);
      assert.equal(await ask({ "x-api-key": KEY }), 200);
    } finally {
      await server.close();
    }
    const lines = requests(entries);
    assert.deepEqual(
      lines.map((l) => [l.status, l.level, l.code, l.route]),
      [
        [401, "warn", "missing_api_key", "GET /products"],
        [401, "warn", "invalid_api_key", "GET /products"],
        [401, "warn", "wrong_environment", "GET /products"],
        [200, "info", undefined, "GET /products"],
      ],
    );
    const record = await admin.keys.findByHash(hashApiKey(KEY));
    const served = lines[3]!;
    assert.equal(served.partner_id, record!.partnerId);
    assert.equal(served.key_id, record!.id);
    assert.match(served.key_id!, /^[1-9][0-9]*$/);
    assert.equal(served.instance, "test-instance-1");
    assert.match(served.client_address ?? "", /^(::ffff:)?127\.0\.0\.1$|^::1$/);
    assert.ok(served.bytes_out > 0);
    assert.equal(served.bytes_in, 0);
    for (const line of lines) assert.ok(!JSON.stringify(line).includes(KEY), "never the key");
  });

  test("a 429 is warn with rate_limited and its partner; a 503 is error; bytes in and out are counted", async () => {
    const entries: LogEntry[] = [];
    const data = { ...loadFixtureDir(DEFAULT_FIXTURES_DIR), prices: new MemoryPriceSource([]) };
    const server = await startTestServer({ data, rateLimitQuota: 2, log: (e) => entries.push(e) });
    const body = eventBody();
    try {
      const event = await fetch(`${server.url}${INBOUND}`, {
        method: "POST",
        headers: eventHeaders(body, "k-log-lines"),
        body,
      });
      assert.equal(event.status, 200, await event.text());
      const position = await fetch(
        `${server.url}${PRODUCTS}/usdc-base-prime/position?address=${DEMO.walletWithPositions}`,
        { headers: { "x-api-key": KEY } },
      );
      assert.equal(position.status, 503, await position.text());
      const limited = await fetch(`${server.url}${PRODUCTS}`, { headers: { "x-api-key": KEY } });
      assert.equal(limited.status, 429, await limited.text());
    } finally {
      await server.close();
    }
    const [accepted, unavailable, limited] = requests(entries);
    assert.equal(accepted!.level, "info");
    assert.equal(accepted!.route, "POST /webhooks/inbound");
    assert.equal(accepted!.bytes_in, Buffer.byteLength(body));
    assert.deepEqual(
      [unavailable!.status, unavailable!.level, unavailable!.code, unavailable!.route],
      [503, "error", "service_unavailable", "GET /products/{slug}/position"],
    );
    assert.deepEqual(
      [limited!.status, limited!.level, limited!.code, typeof limited!.partner_id],
      [429, "warn", "rate_limited", "string"],
    );
  });

  test("health probes are not logged by default; logHealthChecks logs them", async () => {
    for (const logHealthChecks of [false, true]) {
      const entries: LogEntry[] = [];
      const server = await startTestServer({ logHealthChecks, log: (e) => entries.push(e) });
      try {
        for (const path of ["/healthz", "/readyz", PRODUCTS])
          await (await fetch(`${server.url}${path}`)).text();
      } finally {
        await server.close();
      }
      const paths = requests(entries).map((l) => [l.path, l.route]);
      assert.deepEqual(
        paths,
        logHealthChecks
          ? [
              ["/healthz", "GET /healthz"],
              ["/readyz", "GET /readyz"],
              [PRODUCTS, "GET /products"],
            ]
          : [[PRODUCTS, "GET /products"]],
      );
    }
  });
});

describe("error lines", () => {
  /** An event store that fails the way a bug would, at one place in the code. */
  class BrokenStore extends MemoryEventStore {
    calls = 0;
    override append(_event: NewEvent): never {
      this.calls++;
      throw new TypeError(`the store exploded on call ${this.calls}`);
    }
  }

  test("one stack per distinct cause per minute; the next line counts those left out", () => {
    let now = 1_000_000;
    const entries: LogEntry[] = [];
    const log = resolveErrorLog(
      (e) => entries.push(e),
      undefined,
      () => now,
    )!;
    const store = new BrokenStore();
    const fail = () => {
      try {
        store.append({} as NewEvent);
      } catch (error) {
        return error;
      }
      throw new Error("unreachable");
    };
    for (let i = 0; i < 5; i++) log(fail(), `req_${i}`);
    // Another cause is logged at once, its own minute.
    const down = new StoreUnavailableError("postgres: looking up an API key failed", 2, {
      cause: new Error("connect ECONNREFUSED 127.0.0.1:5432"),
    });
    log(down, "req_down", { status: 503, code: "service_unavailable" });
    log(down, "req_down_again", { status: 503, code: "service_unavailable" });
    assert.deepEqual(
      entries.map((e) => [(e as ErrorLogEntry).request_id, (e as ErrorLogEntry).suppressed]),
      [
        ["req_0", undefined],
        ["req_down", undefined],
      ],
    );
    assert.match((entries[0] as ErrorLogEntry).error.stack ?? "", /BrokenStore\.append/);
    now += STACK_WINDOW_MS;
    log(fail(), "req_later");
    const last = entries.at(-1) as ErrorLogEntry;
    assert.equal(last.request_id, "req_later");
    assert.equal(last.suppressed, 4);
    assert.equal(last.code, "internal_error");
    assert.deepEqual(Object.keys(last).slice(0, 4), ["time", "level", "msg", "instance"]);
  });

  test("over a server: many 500s of one cause give one error line, every request line is error", async () => {
    const entries: LogEntry[] = [];
    const api = createNodePartnerApi({ events: new BrokenStore(), log: (e) => entries.push(e) });
    const server = await startTestServer({ api, log: (e) => entries.push(e) });
    try {
      for (let i = 0; i < 4; i++) {
        const body = eventBody();
        const res = await fetch(`${server.url}${INBOUND}`, {
          method: "POST",
          headers: eventHeaders(body, `k-broken-${i}`),
          body,
        });
        assert.equal(res.status, 500, await res.text());
      }
    } finally {
      await server.close();
    }
    assert.equal(entries.filter((e) => e.msg === "unexpected_error").length, 1);
    assert.deepEqual(
      requests(entries).map((l) => [l.level, l.code]),
      Array(4).fill(["error", "internal_error"]),
    );
  });
});

describe("store lines", () => {
  test("a store that fails its check: one store_down line, then one store_up line when it answers again", async () => {
    let up = false;
    const entries: StoreLogEntry[] = [];
    const watch = watchStores({
      checks: {
        events: () =>
          up ? Promise.resolve() : Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432")),
        rate_limits: () => Promise.resolve(),
      },
      log: (e) => entries.push(e),
      intervalMs: 5,
    });
    try {
      // Many requests meet the outage: one line.
      for (let i = 0; i < 20; i++) watch.suspect();
      for (let i = 0; i < 200 && entries.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
      await watch.settled();
      assert.deepEqual(
        entries.map((e) => [e.level, e.msg, e.store, e.error]),
        [["error", "store_down", "events", "connect ECONNREFUSED 127.0.0.1:5432"]],
      );
      assert.deepEqual([...watch.down.keys()], ["events"]);
      up = true;
      for (let i = 0; i < 400 && entries.length === 1; i++) await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual(
        entries.map((e) => [e.level, e.msg, e.store]),
        [
          ["error", "store_down", "events"],
          ["info", "store_up", "events"],
        ],
      );
      assert.ok(entries[1]!.down_ms! >= 0);
      assert.equal(watch.down.size, 0);
      for (const entry of entries)
        assert.deepEqual(Object.keys(entry).slice(0, 5), ["time", "level", "msg", "instance", "store"]);
    } finally {
      watch.close();
    }
  });

  test("the API tells the watch of every StoreUnavailableError, also with the log off", async () => {
    class DownStore extends MemoryEventStore {
      override append(_event: NewEvent): Promise<never> {
        return Promise.reject(new StoreUnavailableError("postgres: connection refused", 2));
      }
    }
    const heard: string[] = [];
    const api = createNodePartnerApi({
      events: new DownStore(),
      log: "none",
      onStoreError: (error) => heard.push(error.message),
    });
    const body = eventBody();
    const res = await api.handle({
      method: "POST",
      path: INBOUND,
      headers: eventHeaders(body, "k-watch"),
      body: new TextEncoder().encode(body),
      clientAddress: "127.0.0.1",
    });
    assert.equal(res.status, 503);
    assert.deepEqual(heard, ["postgres: connection refused"]);
  });
});

test("lifecycle lines share the field order", () => {
  const entry = serverLogEntry("info", "listening", { url: "http://127.0.0.1:8787" });
  assert.deepEqual(Object.keys(entry), ["time", "level", "msg", "instance", "url"]);
});
