/**
 * The JSON request log is buffered (one write every 10 ms, or per 64 KiB): no line
 * may be lost or cut, neither when the server is closed right after its last response nor when
 * the process exits at once.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { DEMO } from "@partner-yield/node-adapter/testing";
import fc from "fast-check";
import { startServer } from "../src/index.js";
import { type RequestLogEntry, requestLine } from "../src/request-log.js";

const REQUEST_LOG = fileURLToPath(new URL("../src/request-log.ts", import.meta.url));

/**
 * Runs `fn` with process.stdout.write captured; returns the strings written (the test runner's own
 * reports to its parent are binary and pass through).
 */
async function captureStdout(fn: () => Promise<void>): Promise<string[]> {
  const writes: string[] = [];
  const original = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof chunk === "string") {
      writes.push(chunk);
      return true;
    }
    return (original as (c: Uint8Array, ...r: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  }) as typeof process.stdout.write;
  try {
    await fn();
  } finally {
    process.stdout.write = original;
  }
  return writes;
}

test("every request's line is written, whole, by the time close() resolves", async () => {
  const count = 40;
  const writes = await captureStdout(async () => {
    const server = await startServer({ port: 0, log: "json", rateLimitQuota: 1_000_000 });
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        fetch(`${server.url}/api/partner/products`, {
          headers: { "x-api-key": DEMO.sandboxApiKey, "x-request-id": `buffered-${i}` },
        }).then((res) => res.text().then(() => res.status)),
      ),
    );
    assert.ok(answers.every((s) => s === 200));
    await server.close();
  });
  const text = writes.join("");
  assert.ok(text.endsWith("\n"));
  const lines = text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const ids = lines.map((l) => l["request_id"]).sort();
  assert.deepEqual(ids, Array.from({ length: count }, (_, i) => `buffered-${i}`).sort());
  for (const line of lines) {
    // Fixture keys have no stored id: no key_id.
    assert.deepEqual(Object.keys(line), [
      "time",
      "level",
      "msg",
      "instance",
      "request_id",
      "method",
      "path",
      "route",
      "status",
      "partner_id",
      "client_address",
      "bytes_in",
      "bytes_out",
      "duration_ms",
    ]);
    assert.equal(line["path"], "/api/partner/products");
    assert.equal(line["status"], 200);
  }
});

test("lines still waiting when the process exits are written", () => {
  const script = `
    import { resolveRequestLog } from ${JSON.stringify(REQUEST_LOG)};
    const log = resolveRequestLog("json");
    for (let i = 0; i < 3; i++) {
      log({ time: "2026-01-01T00:00:00.000Z", level: "info", msg: "request", instance: "i",
            request_id: "r" + i, method: "GET", path: "/x", status: 200, bytes_in: 0, bytes_out: 2,
            duration_ms: 0.1 });
    }
    process.exit(0);
  `;
  const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "--conditions=@partner-yield/source" },
  });
  assert.equal(run.status, 0, run.stderr);
  const ids = run.stdout
    .trimEnd()
    .split("\n")
    .map((line) => (JSON.parse(line) as { request_id: string }).request_id);
  assert.deepEqual(ids, ["r0", "r1", "r2"]);
});

test("a request line is exactly JSON.stringify of its entry, whatever the strings and numbers", () => {
  const text = fc.oneof(
    fc.string(),
    fc.string({ unit: "binary" }),
    fc.constantFrom('"', "\\", "\u2028", "\ud800", "ypk_"),
  );
  fc.assert(
    fc.property(
      text,
      text,
      text,
      text,
      fc.oneof(fc.integer(), fc.double()),
      fc.oneof(fc.double(), fc.constant(0.1), fc.constant(1e21)),
      fc.boolean(),
      fc.record({
        route: fc.option(text, { nil: undefined }),
        code: fc.option(text, { nil: undefined }),
        partner_id: fc.option(text, { nil: undefined }),
        key_id: fc.option(text, { nil: undefined }),
        client_address: fc.option(text, { nil: undefined }),
      }),
      fc.constantFrom("info", "warn", "error") as fc.Arbitrary<RequestLogEntry["level"]>,
      fc.nat(),
      (time, requestId, method, path, status, duration, aborted, optional, level, bytes) => {
        const base: RequestLogEntry = {
          time,
          level,
          msg: "request",
          instance: path,
          request_id: requestId,
          method,
          path,
          route: optional.route,
          status,
          code: optional.code,
          partner_id: optional.partner_id,
          key_id: optional.key_id,
          client_address: optional.client_address,
          bytes_in: bytes,
          bytes_out: status,
          duration_ms: duration,
        };
        const entry: RequestLogEntry = aborted ? { ...base, aborted: true } : base;
        assert.equal(requestLine(entry), `${JSON.stringify(entry)}\n`);
      },
    ),
    { numRuns: 2000 },
  );
});
