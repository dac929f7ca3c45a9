/**
 * `/readyz` fails only on this instance's own state (draining, its own pool exhausted); the shared
 * stores are reported in its body and a store down makes it "degraded", still 200.
 */
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { test } from "node:test";
import { startTestServer } from "@partner-yield/node-adapter/testing";
import { watchPool } from "../src/pool-readiness.js";

test("a shared store down is reported (degraded, 200); an instance check failing is 503 with Retry-After", async () => {
  let own = "ok";
  const server = await startTestServer({
    readinessChecks: {
      events: () => Promise.resolve(),
      rate_limits: () => Promise.reject(new Error("redis down")),
    },
    instanceChecks: { database_pool: () => own },
  });
  try {
    const degraded = await fetch(`${server.url}/readyz`);
    assert.equal(degraded.status, 200);
    assert.deepEqual(await degraded.json(), {
      status: "degraded",
      stores: { events: "ok", rate_limits: "unavailable" },
      instance: { database_pool: "ok" },
    });
    own = "exhausted";
    const exhausted = await fetch(`${server.url}/readyz`);
    assert.equal(exhausted.status, 503);
    assert.equal(exhausted.headers.get("retry-after"), "1");
    assert.deepEqual(await exhausted.json(), {
      status: "not_ready",
      stores: { events: "ok", rate_limits: "unavailable" },
      instance: { database_pool: "exhausted" },
    });
  } finally {
    await server.close();
  }
});

/** A pool's counters, set by the test. */
class FakePool extends EventEmitter {
  totalCount = 0;
  idleCount = 0;
  waitingCount = 0;
  readonly options = { max: 4 };
}

test("watchPool: exhausted only when full with requests waiting for 5 s without a break while the database answers", () => {
  const pool = new FakePool();
  const clock = { now: 0 };
  const watch = watchPool(pool, { now: () => clock.now, sampleMs: 60_000 });
  try {
    const at = (ms: number) => {
      clock.now = ms;
      watch.sample();
    };
    assert.equal(watch.state(), "ok");
    Object.assign(pool, { totalCount: 4, idleCount: 0, waitingCount: 3 });
    at(1000);
    pool.emit("release", undefined);
    at(5999);
    pool.emit("release", undefined);
    assert.equal(watch.state(), "ok", "saturated for 4999 ms only");
    at(6000);
    assert.equal(watch.state(), "exhausted");

    // A break (nobody waiting) starts the count again.
    pool.waitingCount = 0;
    at(6100);
    pool.waitingCount = 2;
    at(6200);
    pool.emit("release", undefined);
    at(11_000);
    assert.equal(watch.state(), "ok");

    // Full and waiting, but no connection came back clean for over 1 s: the database does not
    // answer (a shared store down), not this instance's own pool.
    at(11_300);
    pool.emit("release", new Error("timeout"));
    at(20_000);
    assert.equal(watch.state(), "ok");
    pool.emit("release", undefined);
    assert.equal(watch.state(), "exhausted");
  } finally {
    watch.stop();
  }
});
