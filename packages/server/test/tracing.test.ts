/**
 * OpenTelemetry traces (tracing.ts, otlp-tracing.ts): a request's server span continues the trace
 * of its `traceparent` (and keeps its `tracestate`), or starts a new one; the store calls that wait
 * are its children; a store answering at once stays synchronous and gets no span; no attribute
 * holds a key, its hash, a signature, a signing secret or a body. Spans go to an in-memory
 * exporter; the stores are in memory answering later, then PostgreSQL and Redis; and, in the last test, `partner-yield serve` with OTEL_EXPORTER_OTLP_ENDPOINT sends
 * them over OTLP/HTTP to a receiver on loopback.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import {
  type EventStore,
  hashApiKey,
  type KeyStore,
  MemoryEventStore,
  MemoryRateLimiter,
  StoreUnavailableError,
} from "@partner-yield/core";
import { createNodePartnerApi, nodeSha256, type RunningServer } from "@partner-yield/node-adapter";
import {
  DEMO,
  eventBody,
  eventHeaders,
  gate,
  INBOUND,
  KEY,
  loadSandbox,
  startTestServer,
} from "@partner-yield/node-adapter/testing";
import { createPostgresStores, dataSetOf, importData } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { RedisRateLimiter } from "@partner-yield/store-redis";
import { redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import { startTracing, tracingFromEnvironment } from "../src/otlp-tracing.js";
import { otlpEndpoint, type TracedPorts, traceHandler, tracePorts } from "../src/tracing.js";
import { startServerProcess } from "./server-process.js";

const exporter = new InMemorySpanExporter();
const tracing = startTracing({ exporter, batch: false, serviceName: "partner-yield-test" });
after(() => tracing.shutdown());

/** A test server traced as `serve` traces it: its stores through `tracePorts`, its requests through `traceHandler`. */
function startTracedServer(ports: TracedPorts): Promise<RunningServer> {
  const api = createNodePartnerApi({
    log: "none",
    rateLimitQuota: 1_000_000,
    ...tracePorts(ports, tracing.tracer),
  });
  return startTestServer({ api, handler: traceHandler(api, tracing) });
}

/** A store whose every method answers with a promise, as one that goes to PostgreSQL or Redis. */
function answeringLater<T extends object>(store: T): T {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => Promise.resolve(value.apply(target, args));
    },
  });
}

function hexId(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

/** The finished spans of one trace, and its server span. */
function traceOf(traceId: string): { server: ReadableSpan; spans: ReadableSpan[] } {
  const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const servers = spans.filter((s) => s.kind === SpanKind.SERVER);
  assert.equal(servers.length, 1, `one server span in trace ${traceId}`);
  return { server: servers[0]!, spans };
}

function childrenOf(parent: ReadableSpan, spans: readonly ReadableSpan[]): string[] {
  return spans
    .filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId)
    .map((s) => s.name)
    .sort();
}

/** Every attribute key and value, the names, the status messages and events, as one text. */
function everythingRecorded(): string {
  return JSON.stringify(
    exporter.getFinishedSpans().map((s) => ({
      name: s.name,
      attributes: s.attributes,
      status: s.status,
      events: s.events,
    })),
  );
}

describe("traces of requests", async () => {
  let server: RunningServer;
  before(async () => {
    const data = loadSandbox();
    server = await startTracedServer({
      keys: answeringLater(data.keys),
      partners: answeringLater(data.partners),
      products: answeringLater(data.products),
      positions: data.positions,
      prices: data.prices,
      events: new MemoryEventStore(),
      rateLimiter: answeringLater(new MemoryRateLimiter()),
    });
  });
  after(() => server.close());

  test("a traceparent's trace is continued: the server span's parent is its span, stores are children", async () => {
    const traceId = hexId(16);
    const parentId = hexId(8);
    const res = await fetch(`${server.url}/api/partner/products/usdc-base-prime`, {
      headers: {
        "x-api-key": KEY,
        traceparent: `00-${traceId}-${parentId}-01`,
        tracestate: "acme=t61rcWkgMzE",
      },
    });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    const { server: span, spans } = traceOf(traceId);
    assert.equal(span.parentSpanContext?.spanId, parentId);
    assert.equal(span.parentSpanContext?.traceId, traceId);
    assert.equal(span.spanContext().traceState?.get("acme"), "t61rcWkgMzE");
    assert.equal(span.name, "GET /products/{slug}");
    assert.equal(span.attributes["http.route"], "/products/{slug}");
    assert.equal(span.attributes["http.request.method"], "GET");
    assert.equal(span.attributes["http.response.status_code"], 200);
    assert.equal(span.attributes["partner_yield.partner_id"], "northwind");
    assert.equal(span.attributes["partner_yield.request_id"], res.headers.get("x-request-id"));
    assert.notEqual(span.status.code, SpanStatusCode.ERROR);
    assert.deepEqual(childrenOf(span, spans), [
      "keys.findByHash",
      "partners.getPartner",
      "products.getProduct",
      "rate_limiter.hit",
    ]);
    for (const child of spans.filter((s) => s !== span)) {
      assert.equal(child.kind, SpanKind.CLIENT);
      assert.deepEqual(Object.keys(child.attributes), ["partner_yield.store"], child.name);
    }
  });

  test("a signed event: the event insert is a child span; no key, hash, signature, secret or body is recorded", async () => {
    const traceId = hexId(16);
    const userId = `user-${hexId(6)}`;
    const body = eventBody(userId);
    const headers = eventHeaders(body, `trace-${hexId(4)}`);
    const res = await fetch(`${server.url}${INBOUND}`, {
      method: "POST",
      headers: { ...headers, traceparent: `00-${traceId}-${hexId(8)}-01` },
      body,
    });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    const { server: span, spans } = traceOf(traceId);
    assert.ok(childrenOf(span, spans).includes("events.append"), childrenOf(span, spans).join());
    assert.equal(span.attributes["http.route"], "/webhooks/inbound");

    // A wrong key too: refused, and still not recorded.
    const wrongKey = `${KEY.slice(0, -4)}AAAA`;
    const refused = await fetch(`${server.url}/api/partner/products`, {
      headers: { "x-api-key": wrongKey, traceparent: `00-${hexId(16)}-${hexId(8)}-01` },
    });
    assert.equal(refused.status, 401);
    await refused.arrayBuffer();

    const recorded = everythingRecorded();
    for (const secret of [
      KEY,
      wrongKey,
      hashApiKey(KEY, nodeSha256),
      DEMO.signingSecret,
      headers["x-partner-signature"]!,
      userId,
    ]) {
      assert.ok(!recorded.includes(secret), `a span records ${secret.slice(0, 12)}…`);
    }
  });

  test("a refusal carries its error code; a 4xx is not a span error", async () => {
    const traceId = hexId(16);
    const res = await fetch(`${server.url}/api/partner/products`, {
      headers: { "x-api-key": "not-a-key", traceparent: `00-${traceId}-${hexId(8)}-01` },
    });
    assert.equal(res.status, 401);
    await res.arrayBuffer();
    const { server: span } = traceOf(traceId);
    assert.equal(span.attributes["http.response.status_code"], 401);
    assert.equal(span.attributes["error.type"], "invalid_api_key");
    assert.equal(span.attributes["partner_yield.error_code"], "invalid_api_key");
    assert.notEqual(span.status.code, SpanStatusCode.ERROR);
  });

  test("without a traceparent, or with a malformed one, a request starts a new trace", async () => {
    const before = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId));
    for (const traceparent of [undefined, "00-zz-not-a-parent-01", `00-${"0".repeat(32)}-${hexId(8)}-01`]) {
      const headers: Record<string, string> = { "x-api-key": KEY };
      if (traceparent !== undefined) headers["traceparent"] = traceparent;
      const res = await fetch(`${server.url}/api/partner/products`, { headers });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    const fresh = exporter
      .getFinishedSpans()
      .filter((s) => s.kind === SpanKind.SERVER && !before.has(s.spanContext().traceId));
    assert.equal(fresh.length, 3);
    assert.equal(new Set(fresh.map((s) => s.spanContext().traceId)).size, 3);
    for (const span of fresh) {
      assert.equal(span.parentSpanContext, undefined);
      assert.match(span.spanContext().traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(span.spanContext().traceId, "0".repeat(32));
    }
  });
});

describe("a store that fails", async () => {
  const events: EventStore = {
    append: () => Promise.reject(new StoreUnavailableError("the event store is down (test)")),
    find: () => Promise.resolve(undefined),
    list: () => Promise.resolve([]),
    close: () => Promise.resolve(),
  };
  let server: RunningServer;
  before(async () => {
    server = await startTracedServer({ events });
  });
  after(() => server.close());

  test("a 503: the server span and the store's span are errors, named by the error's type only", async () => {
    const traceId = hexId(16);
    const body = eventBody();
    const res = await fetch(`${server.url}${INBOUND}`, {
      method: "POST",
      headers: { ...eventHeaders(body, `down-${hexId(4)}`), traceparent: `00-${traceId}-${hexId(8)}-01` },
      body,
    });
    assert.equal(res.status, 503);
    await res.arrayBuffer();
    const { server: span, spans } = traceOf(traceId);
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    const append = spans.find((s) => s.name === "events.append");
    assert.ok(append !== undefined);
    assert.equal(append.status.code, SpanStatusCode.ERROR);
    assert.equal(append.attributes["error.type"], "StoreUnavailableError");
    assert.ok(!everythingRecorded().includes("(test)"), "an error's message is not recorded");
  });
});

const services = gate({ PostgreSQL: await postgresReachable(), Redis: await redisReachable() });
if (services.available) {
  describe("traces on PostgreSQL and Redis", async () => {
    const db = await testDatabase("tracing");
    await importData(db.pool, dataSetOf(loadSandbox()));
    const { redis, prefix } = await testRedis("tracing");
    const { events, keys, partners, products, positions, prices } = createPostgresStores(db.pool);
    const rateLimiter = new RedisRateLimiter({ redis, keyPrefix: prefix });
    let server: RunningServer;
    before(async () => {
      server = await startTracedServer({
        events,
        keys,
        partners,
        products,
        positions,
        prices,
        rateLimiter,
      });
    });
    after(() => server.close());

    test("the key, partner and product reads, the event insert and the limiter are the request's children", async () => {
      const getTrace = hexId(16);
      const res = await fetch(`${server.url}/api/partner/products/usdc-base-prime`, {
        headers: { "x-api-key": KEY, traceparent: `00-${getTrace}-${hexId(8)}-01` },
      });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      const get = traceOf(getTrace);
      assert.deepEqual(childrenOf(get.server, get.spans), [
        "keys.findByHash",
        "partners.getPartner",
        "products.getProduct",
        "rate_limiter.hit",
      ]);
      const system = (name: string, spans: readonly ReadableSpan[]) =>
        spans.find((s) => s.name === name)?.attributes["db.system.name"];
      assert.equal(system("keys.findByHash", get.spans), "postgresql");
      assert.equal(system("products.getProduct", get.spans), "postgresql");
      assert.equal(system("rate_limiter.hit", get.spans), "redis");

      const postTrace = hexId(16);
      const body = eventBody();
      const posted = await fetch(`${server.url}${INBOUND}`, {
        method: "POST",
        headers: { ...eventHeaders(body, `pg-${hexId(4)}`), traceparent: `00-${postTrace}-${hexId(8)}-01` },
        body,
      });
      assert.equal(posted.status, 200);
      await posted.arrayBuffer();
      const post = traceOf(postTrace);
      assert.ok(childrenOf(post.server, post.spans).includes("events.append"));
      assert.equal(system("events.append", post.spans), "postgresql");
      assert.ok(!everythingRecorded().includes(KEY));
    });
  });
}

describe("tracePorts", () => {
  test("a store answering at once stays synchronous and gets no span; its other methods still work", () => {
    const data = loadSandbox();
    const ports = tracePorts(
      { keys: data.keys as KeyStore, rateLimiter: new MemoryRateLimiter() },
      tracing.tracer,
    );
    const before = exporter.getFinishedSpans().length;
    const record = ports.keys!.findByHash(hashApiKey(KEY, nodeSha256));
    assert.ok(record !== undefined && typeof (record as { then?: unknown }).then !== "function");
    assert.equal((record as { partnerId: string }).partnerId, "northwind");
    const decision = ports.rateLimiter!.hit("northwind:sandbox", 10, 60_000);
    assert.equal((decision as { allowed: boolean }).allowed, true);
    assert.equal(exporter.getFinishedSpans().length, before);
    // A method that is not traced runs on the store itself (its private fields are not on the proxy).
    assert.equal((ports.rateLimiter as MemoryRateLimiter).size, 1);
  });

  test("a failed export is one warning line naming the endpoint", async () => {
    // A collector that refuses every export with a 400 (not retried, unlike a refused connection).
    const refusing = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(400, { "content-type": "text/plain" }).end("bad request"));
    });
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    after(() => new Promise((resolve) => refusing.close(resolve)));
    const port = (refusing.address() as AddressInfo).port;
    const lines: string[] = [];
    const setup = tracingFromEnvironment(
      { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: "20" },
      (line) => lines.push(line),
    );
    assert.ok(setup !== undefined);
    try {
      for (let i = 0; i < 3; i++) setup.tracer.startSpan(`lost ${i}`).end();
      const deadline = Date.now() + 10_000;
      while (lines.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(lines.length, 1, "one line");
      const line = JSON.parse(lines[0]!) as Record<string, unknown>;
      assert.equal(line["level"], "warn");
      assert.equal(line["msg"], "trace export failed");
      assert.equal(line["endpoint"], `http://127.0.0.1:${port}/v1/traces`);
      assert.equal(typeof line["spans_lost"], "number");
    } finally {
      await setup.shutdown();
    }
  });

  test("tracingFromEnvironment refuses a malformed endpoint or setting, naming the variable", () => {
    assert.throws(
      () => tracingFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }),
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/,
    );
    assert.throws(
      () =>
        tracingFromEnvironment({
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
          OTEL_BSP_SCHEDULE_DELAY: "soon",
        }),
      /OTEL_BSP_SCHEDULE_DELAY/,
    );
    assert.throws(
      () =>
        tracingFromEnvironment({
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
          OTEL_TRACES_SAMPLER: "sometimes",
        }),
      /OTEL_TRACES_SAMPLER must be one of/,
    );
    assert.equal(tracingFromEnvironment({}), undefined);
  });

  test("otlpEndpoint: the traces endpoint first, blank means unset, OTEL_SDK_DISABLED turns it off", () => {
    assert.equal(otlpEndpoint({}), undefined);
    assert.equal(otlpEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }), undefined);
    assert.equal(otlpEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }), "http://c:4318");
    assert.equal(
      otlpEndpoint({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:4318/v1/traces",
      }),
      "http://t:4318/v1/traces",
    );
    assert.equal(
      otlpEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }),
      undefined,
    );
  });
});

describe("partner-yield serve with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  test("exports the request's spans over OTLP/HTTP to the endpoint, as OTEL_SERVICE_NAME", async () => {
    const received: { path: string; body: string }[] = [];
    const receiver = createServer((req: IncomingMessage, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        received.push({ path: req.url ?? "", body });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const port = (receiver.address() as AddressInfo).port;
    const names = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME", "OTEL_BSP_SCHEDULE_DELAY"] as const;
    const saved = names.map((name) => process.env[name]);
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_SERVICE_NAME: "partner-yield-otlp-test",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    let child: Awaited<ReturnType<typeof startServerProcess>> | undefined;
    try {
      child = await startServerProcess([]);
    } finally {
      names.forEach((name, i) => {
        if (saved[i] === undefined) delete process.env[name];
        else process.env[name] = saved[i];
      });
    }
    try {
      assert.match(child.banner, new RegExp(`traces: OTLP/HTTP to http://127\\.0\\.0\\.1:${port}/v1/traces`));
      const traceId = hexId(16);
      const res = await fetch(`${child.url}/api/partner/products`, {
        headers: { "x-api-key": KEY, traceparent: `00-${traceId}-${hexId(8)}-01` },
      });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      const deadline = Date.now() + 15_000;
      while (!received.some((r) => r.body.includes(traceId)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const exported = received.find((r) => r.body.includes(traceId));
      assert.ok(exported !== undefined, `no export of trace ${traceId} (${received.length} received)`);
      assert.equal(exported.path, "/v1/traces");
      assert.ok(exported.body.includes("partner-yield-otlp-test"), "the service name is OTEL_SERVICE_NAME");
      assert.ok(exported.body.includes("GET /products"), "the server span is named by its route");
      assert.ok(!exported.body.includes(KEY), "the key is not exported");
    } finally {
      assert.equal(await child.stop("SIGTERM"), 0);
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
