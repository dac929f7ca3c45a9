/** Graceful shutdown over real sockets: requests in flight finish, no acknowledged event is lost. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type EventStore, MemoryEventStore, type NewEvent } from "@partner-yield/core";
import {
  eventBody,
  eventHeaders,
  eventually,
  INBOUND,
  sleep,
  startTestServer,
} from "@partner-yield/node-adapter/testing";
import { Client } from "undici";
import { createNodePartnerApi } from "../src/index.js";

/** A memory store that notices use after close. */
class WatchedStore extends MemoryEventStore implements EventStore {
  closed = false;
  appendsAfterClose = 0;
  override append(event: NewEvent) {
    if (this.closed) this.appendsAfterClose++;
    return super.append(event);
  }
  override close() {
    this.closed = true;
    return super.close();
  }
}

test("shutdown during a burst of events loses no acknowledged event", async () => {
  const store = new WatchedStore();
  const api = createNodePartnerApi({ events: store, rateLimitQuota: 1_000_000 });
  // Requests take 0–15 ms after the event is stored, so many are in flight when shutdown starts.
  const server = await startTestServer({
    api,
    wrap: (inner) => ({
      handle: async (req) => {
        const res = await inner.handle(req);
        await sleep(Math.floor(Math.random() * 15));
        return res;
      },
    }),
  });
  const acked: number[] = [];
  let failed = 0;
  let closing: Promise<void> | undefined;
  const clients = Array.from({ length: 20 }, () => new Client(server.url));
  const started = Date.now();
  await Promise.all(
    clients.map(async (client, c) => {
      for (let i = 0; i < 15; i++) {
        const body = eventBody();
        try {
          const res = await client.request({
            method: "POST",
            path: INBOUND,
            headers: eventHeaders(body, `burst-${c}-${i}`),
            body,
          });
          const text = await res.body.text();
          if (res.statusCode === 200) acked.push((JSON.parse(text) as { event_id: number }).event_id);
          else failed++;
        } catch {
          failed++;
        }
        if (acked.length >= 40 && closing === undefined) closing = server.close();
      }
    }),
  );
  await closing;
  const elapsed = Date.now() - started;
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));

  assert.ok(acked.length >= 40, `only ${acked.length} acks`);
  assert.ok(failed > 0, "the burst should outlast the server");
  assert.equal(store.closed, true);
  assert.equal(store.appendsAfterClose, 0);
  const stored = new Set((await store.list(0, 100_000)).map((e) => e.id));
  for (const id of acked) assert.ok(stored.has(id), `acknowledged event ${id} is not in the store`);
  assert.ok(elapsed < 10_000, `shutdown took ${elapsed} ms`);
});

test("shutdown stops accepting at once but waits for a slow request in flight", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server = await startTestServer({
    wrap: (api) => ({
      handle: async (req) => {
        if (req.path === "/api/partner/products") await gate;
        return api.handle(req);
      },
    }),
  });
  const slowClient = new Client(server.url);
  const opsClient = new Client(server.url);
  try {
    const ready = await opsClient.request({ method: "GET", path: "/readyz" });
    assert.equal(ready.statusCode, 200);
    await ready.body.text();

    const slow = slowClient.request({
      method: "GET",
      path: "/api/partner/products",
      headers: eventHeaders("", "x"),
    });
    await eventually(() => server.listener.inFlight === 1, 2_000, "the slow request to arrive");
    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    await sleep(50);
    assert.equal(closed, false, "close() must wait for the request in flight");

    assert.equal(server.listener.draining, true);
    await assert.rejects(
      opsClient.request({ method: "GET", path: "/readyz" }),
      "no new connections while draining",
    );

    release();
    const res = await slow;
    assert.equal(res.statusCode, 200);
    await res.body.text();
    await closing;
    assert.equal(await server.api.ready(), false, "the API (and its stores) closed");
  } finally {
    release();
    await slowClient.close().catch(() => undefined);
    await opsClient.close().catch(() => undefined);
    await server.close();
  }
});

test("a request that outlives shutdownTimeout is cut off; shutdown stays bounded", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server = await startTestServer({
    timeouts: { shutdownTimeoutMs: 200 },
    wrap: (api) => ({
      handle: async (req) => {
        if (req.path === "/api/partner/products") await gate;
        return api.handle(req);
      },
    }),
  });
  const client = new Client(server.url);
  const hanging = client.request({ method: "GET", path: "/api/partner/products" }).then(
    () => "answered",
    () => "cut",
  );
  await eventually(() => server.listener.inFlight === 1, 2_000, "the request to arrive");
  const started = Date.now();
  await server.close();
  const elapsed = Date.now() - started;
  assert.equal(await hanging, "cut");
  assert.ok(elapsed >= 150 && elapsed < 2_000, `shutdown took ${elapsed} ms`);
  release();
  await client.close().catch(() => undefined);
});

test("a draining listener answers /readyz 503 and asks every client to close the connection", async () => {
  const server = await startTestServer();
  const client = new Client(server.url);
  try {
    server.listener.drain();
    const ready = await client.request({ method: "GET", path: "/readyz" });
    assert.equal(ready.statusCode, 503);
    assert.equal(ready.headers["retry-after"], "1");
    assert.deepEqual(await ready.body.json(), { status: "draining" });
    assert.equal(ready.headers["connection"], "close");
    const api = await client.request({
      method: "GET",
      path: "/api/partner/products",
      headers: eventHeaders("", "x"),
    });
    assert.equal(api.statusCode, 200);
    assert.equal(api.headers["connection"], "close");
    await api.body.text();
  } finally {
    await client.close();
    await server.close();
  }
});

// The timeout fails the test if close() waits for the store (it would never settle).
test("a store that never closes does not hold shutdown: close() rejects and says so", {
  timeout: 15_000,
}, async () => {
  /** A store whose close() never settles (a pool waiting for a query that never returns). */
  class StuckStore extends MemoryEventStore implements EventStore {
    closeCalled = false;
    override close() {
      this.closeCalled = true;
      return new Promise<void>(() => undefined);
    }
  }
  const store = new StuckStore();
  const server = await startTestServer({ events: store, timeouts: { shutdownTimeoutMs: 100 } });
  const client = new Client(server.url);
  const res = await client.request({ method: "GET", path: "/healthz" });
  await res.body.text();
  await client.close();
  await assert.rejects(server.close(), /the stores did not close within 1000 ms/);
  assert.equal(store.closeCalled, true);
  assert.equal(server.server.listening, false, "the port is closed");
});

test("a store whose close fails makes close() reject with that error", async () => {
  class FailingStore extends MemoryEventStore implements EventStore {
    override close() {
      return Promise.reject(new Error("pool end failed"));
    }
  }
  const server = await startTestServer({ events: new FailingStore() });
  await assert.rejects(server.close(), /pool end failed/);
});
