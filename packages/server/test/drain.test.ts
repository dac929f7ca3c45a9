/**
 * Draining before shutdown (`drainDelayMs`, `serve --drain-delay`): `/readyz` turns 503 at once
 * while the server still accepts and serves, then it stops accepting; a rolling restart of one of
 * two instances behind a load balancer that polls `/readyz`, under keep-alive load, loses no
 * request.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "@partner-yield/node-adapter";
import { KEY, startTestServer } from "@partner-yield/node-adapter/testing";
import { Client } from "undici";
import { helpText, parseCommandLine } from "../src/cli-options.js";
import { getThrough, keepAliveLoad, startBalancer } from "./balancer.js";

test("during the drain delay /readyz is 503 with Retry-After, new connections are still served (Connection: close), then refused", async () => {
  const server = await startTestServer({ drainDelayMs: 1000 });
  const closing = server.close();
  const fresh = new Client(server.url);
  try {
    const ready = await fresh.request({ method: "GET", path: "/readyz" });
    assert.equal(ready.statusCode, 503);
    assert.equal(ready.headers["retry-after"], "1");
    assert.deepEqual(await ready.body.json(), { status: "draining" });
    const again = new Client(server.url);
    const served = await again.request({
      method: "GET",
      path: "/api/partner/products",
      headers: { "x-api-key": KEY },
    });
    assert.equal(served.statusCode, 200, "a new connection is accepted and served while draining");
    assert.equal(served.headers["connection"], "close");
    await served.body.text();
    await again.close();
    await closing;
    await assert.rejects(fetch(`${server.url}/healthz`), "no connection after the drain delay");
  } finally {
    await fresh.close().catch(() => undefined);
    await closing;
  }
});

test("drainDelayMs must be a non-negative integer", async () => {
  await assert.rejects(startTestServer({ drainDelayMs: -1 }), /drainDelayMs/);
});

test("a rolling restart of one of two instances under keep-alive load loses no request", {
  timeout: 30_000,
}, async () => {
  const options = { drainDelayMs: 500 };
  let a: RunningServer = await startTestServer(options);
  const b = await startTestServer(options);
  const balancer = await startBalancer([a, b], 20);
  let restarted!: () => void;
  const done = new Promise<void>((resolve) => {
    restarted = resolve;
  });
  try {
    const load = keepAliveLoad({
      url: balancer.url,
      workers: 8,
      maxPerWorker: 5000,
      until: done,
      send: (url, agent) => getThrough(`${url}/api/partner/products`, agent, { "x-api-key": KEY }),
    });
    // Let the load reach both instances, then restart `a`: drain and stop it, start its successor.
    await balancer.waitForRouted([a]);
    const old = a;
    await old.close();
    a = await startTestServer(options);
    balancer.setBackends([a, b]);
    restarted();
    const result = await load;
    assert.deepEqual(result.errors, [], "no request failed");
    assert.deepEqual([...result.statuses.keys()], [200], "every request answered 200");
    assert.ok(result.total > 0);
  } finally {
    restarted();
    await balancer.close();
    await a.close();
    await b.close();
  }
});

test("serve --drain-delay: 5000 by default, 0 allowed, from PARTNER_YIELD_DRAIN_DELAY_MS too; a flag wins", () => {
  const config = (argv: string[], env: Record<string, string> = {}) => {
    const command = parseCommandLine(["serve", ...argv], env);
    assert.equal(command.command, "serve");
    return command.config;
  };
  assert.equal(config([]).drainDelayMs, 5000);
  assert.equal(config(["--drain-delay", "0"]).drainDelayMs, 0);
  assert.equal(config([], { PARTNER_YIELD_DRAIN_DELAY_MS: "250" }).drainDelayMs, 250);
  assert.equal(config(["--drain-delay", "10"], { PARTNER_YIELD_DRAIN_DELAY_MS: "250" }).drainDelayMs, 10);
  assert.throws(() => config(["--drain-delay", "soon"]), /--drain-delay must be an integer from 0/);
  assert.match(helpText(), /--drain-delay MS +PARTNER_YIELD_DRAIN_DELAY_MS/);
});
