/**
 * A failed guess counts against its client's own address, never the shared bucket of requests
 * without one (CONTRACT §9: the address is kept from accept), even when the client resets the
 * connection at once: a connection reset before the server accepted it has no peer address any
 * more, and is closed unanswered. A client in another process (its own event loop, as a real
 * one) sends a request with an unknown key and resets after 0 to 1,000 µs; which connections win
 * the race depends on the machine, so every counted guess is checked, none counted.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { MemoryRateLimiter, type RateLimiter } from "@partner-yield/core";
import { startTestServer } from "@partner-yield/node-adapter/testing";
import { createNodePartnerApi, type RunningServer } from "../src/index.js";

/** Connects `count` times, writes a guess, waits `us` µs, resets. argv: port, us, count. */
const CLIENT = `
import { connect } from "node:net";
const [port, us, count] = process.argv.slice(1).map(Number);
const guess = "GET /api/partner/products HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nX-Api-Key: ypk_test_nope\\r\\n\\r\\n";
for (let i = 0; i < count; i++) {
  await new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(guess);
      const end = process.hrtime.bigint() + BigInt(us * 1000);
      while (process.hrtime.bigint() < end);
      socket.resetAndDestroy();
      resolve();
    });
    socket.on("error", resolve);
  });
}
`;

/** A limiter recording the key of every hit. */
function recordingLimiter(hits: string[]): RateLimiter {
  const inner = new MemoryRateLimiter();
  return {
    hit: (key, limit, windowMs) => {
      hits.push(key);
      return inner.hit(key, limit, windowMs);
    },
    peek: (key, limit, windowMs) => inner.peek(key, limit, windowMs),
    close: () => inner.close(),
  };
}

describe("a connection reset as soon as its request is sent", () => {
  const servers: RunningServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  test("the guess counts against the client's own address, never the shared unknown bucket", async () => {
    const hits: string[] = [];
    const api = createNodePartnerApi({ environment: "sandbox", rateLimiter: recordingLimiter(hits) });
    const server = await startTestServer({ api });
    servers.push(server);
    const port = new URL(server.url).port;
    for (const us of [0, 50, 200, 1000]) {
      const child = spawn(process.execPath, ["--input-type=module", "-e", CLIENT, port, String(us), "40"], {
        stdio: ["ignore", "ignore", "inherit"],
      });
      assert.equal(await new Promise((resolve) => child.on("close", resolve)), 0);
    }
    await delay(200); // the server hands over what it read
    const byAddress = hits.filter((k) => k.startsWith("auth:") && !k.startsWith("auth:\u0001"));
    assert.deepEqual(
      byAddress.filter((k) => k !== "auth:127.0.0.1"),
      [],
      "every counted guess is 127.0.0.1's",
    );
  });
});
