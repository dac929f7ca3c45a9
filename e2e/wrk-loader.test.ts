/**
 * The wrk loader of `bench:http --loader wrk` (bench/http/wrk.ts): the Lua script it writes makes
 * wrk send the request byte for byte (quotes, backslashes, control characters, NUL and UTF-8 in the
 * body; quotes, backslashes and a tab in a header), a new value of the fresh header on every
 * request, and its result line counts what wrk saw; the children's CPU is read from
 * /proc/self/stat. wrk is a Debian package (`apt-get install wrk`): without it the runs say so and
 * skip, except under CI=true, where .ci/run installs it and they fail instead. The bench's own
 * `--loader` runs are in http-bench.test.ts (one file, so no two runs build the bench at once).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  childrenCpuMicros,
  childrenCpuOf,
  findWrk,
  luaString,
  parseResult,
  runWrk,
  threadsFor,
  WRK_INSTALL_HINT,
  wrkScript,
} from "../bench/http/wrk.js";

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
}

/** A server that records every request and answers 200, or `status(n)` for the n-th request. */
async function recorder(status: (n: number) => number = () => 200) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(status(seen.length), { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { seen, server, port: (server.address() as AddressInfo).port };
}

const wrk = findWrk();

if (wrk === undefined && process.env["CI"] !== "true")
  process.stderr.write(
    `\n${"!".repeat(100)}\n!! SKIPPED: the wrk loader's runs: wrk not found. ${WRK_INSTALL_HINT}.\n!! Under CI=true they fail instead.\n${"!".repeat(100)}\n\n`,
  );

function skipWithoutWrk(t: { skip: (message: string) => void }): boolean {
  if (wrk !== undefined) return false;
  if (process.env["CI"] === "true") assert.fail(`wrk is missing under CI: ${WRK_INSTALL_HINT}`);
  t.skip(`SKIPPED: wrk not found; install it to run this test (${WRK_INSTALL_HINT})`);
  return true;
}

describe("luaString", () => {
  test("escapes quotes, backslashes, control characters and every non-ASCII byte", () => {
    assert.equal(luaString('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(luaString("line\r\n\t"), '"line\\013\\010\\009"');
    assert.equal(luaString("é"), '"\\195\\169"');
    assert.equal(luaString(""), '""');
  });
});

describe("parseResult", () => {
  test("reads the script's line among wrk's own report; no line is an error naming the output", () => {
    const r = parseResult(
      'Running 1s test\nPARTNER_YIELD_WRK {"requests":100,"duration_us":2000000,"p50_us":1500,"p99_us":9000,"status":3,"connect":0,"read":1,"write":0,"timeout":2}\n',
    );
    assert.deepEqual(r, { total: 100, seconds: 2, p50: 1.5, p99: 9, bad: 6 });
    assert.throws(() => parseResult("Running 1s test\n"), /wrk failed: no result line in its output/);
  });
});

describe("runWrk", () => {
  let server: Awaited<ReturnType<typeof recorder>> | undefined;
  before(async () => {
    server = await recorder((n) => (n % 5 === 0 ? 503 : 200));
  });
  after(() => server?.server.close());

  test("a POST with a fresh header: every request byte for byte, each with a value of its own", async (t) => {
    if (skipWithoutWrk(t)) return;
    // Raw bytes, not JSON: every kind of byte the escaping must carry, a digit after each escape.
    const body = 'a"b\\c\t1\n2\r3\u00004é5₿6\u007f7\u001b8 end';
    const request = {
      method: "POST" as const,
      path: "/api/partner/webhooks/inbound?x=1",
      headers: {
        "content-type": "application/json",
        "x-partner-signature": 'sha256=ab"c\\d',
        "x-tab": "a\tb",
        "x-api-key": "ypk_test_key",
      },
      body,
      freshHeader: "idempotency-key",
    };
    const r = await runWrk(wrk!, server!.port, request, 4, 2, 1, "tag-one");
    const seen = server!.seen.splice(0);
    assert.ok(r.total > 0, "wrk read answers");
    assert.ok(
      r.total <= seen.length,
      `wrk counted ${r.total} answers, the server saw ${seen.length} requests`,
    );
    // Every fifth request got a 503: wrk counts those of its answers as bad.
    const refused = seen.filter((_, i) => (i + 1) % 5 === 0).length;
    assert.ok(r.bad > 0 && r.bad <= refused, `bad ${r.bad}, 503s sent ${refused}`);
    assert.ok(r.p50 > 0 && r.p99 >= r.p50, `p50 ${r.p50} ms, p99 ${r.p99} ms`);
    const keys = new Set<string>();
    for (const s of seen) {
      assert.equal(s.method, "POST");
      assert.equal(s.url, request.path);
      assert.deepEqual(s.body, Buffer.from(body, "utf8"));
      assert.equal(s.headers["content-length"], String(Buffer.byteLength(body)));
      assert.equal(s.headers["content-type"], "application/json");
      assert.equal(s.headers["x-partner-signature"], 'sha256=ab"c\\d');
      assert.equal(s.headers["x-tab"], "a\tb");
      assert.equal(s.headers["x-api-key"], "ypk_test_key");
      const key = s.headers["idempotency-key"];
      assert.ok(typeof key === "string" && /^tag-one-[12]-\d+$/.test(key), `fresh header ${key}`);
      keys.add(key);
    }
    assert.equal(keys.size, seen.length, "no two requests share a fresh header value");
  });

  test("a GET without a fresh header sends the same request every time", async (t) => {
    if (skipWithoutWrk(t)) return;
    const r = await runWrk(
      wrk!,
      server!.port,
      { method: "GET", path: "/healthz", headers: { "x-a": "b" } },
      2,
      1,
      1,
      "t",
    );
    const seen = server!.seen.splice(0);
    assert.ok(r.total > 0 && r.total <= seen.length);
    for (const s of seen) {
      assert.equal(s.method, "GET");
      assert.equal(s.url, "/healthz");
      assert.equal(s.headers["x-a"], "b");
      assert.equal(s.body.length, 0);
      assert.equal(s.headers["idempotency-key"], undefined);
    }
  });

  test("the script has no fresh-header code without a fresh header", () => {
    assert.doesNotMatch(wrkScript({ method: "GET", path: "/", headers: {} }), /function request/);
    assert.match(
      wrkScript({ method: "GET", path: "/", headers: {}, freshHeader: "idempotency-key" }),
      /function request/,
    );
  });
});

describe("threadsFor", () => {
  test("the most threads up to the cores that divide the connections", () => {
    assert.equal(threadsFor(50, 2), 2);
    assert.equal(threadsFor(5, 2), 1);
    assert.equal(threadsFor(1, 8), 1);
    assert.equal(threadsFor(12, 8), 6);
  });
});

describe("childrenCpuOf / childrenCpuMicros", () => {
  test("cutime + cstime (fields 16 and 17) after the command's last parenthesis, in µs", () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
    const line = "4242 (a) (b) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n";
    // Field 4 (ppid) is 1, so field 16 (cutime) is 13 and field 17 (cstime) 14: 27 ticks at 100 a
    // second, 270,000 µs.
    assert.equal(childrenCpuOf(line, 100), 270_000);
    assert.ok(Number.isNaN(childrenCpuOf("4242 (a) S 1 2", 100)));
  });

  test("a finished busy child's CPU is counted", (t) => {
    const ticks = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;
    const start = childrenCpuMicros(ticks);
    if (Number.isNaN(start)) {
      t.skip("no /proc/self/stat on this machine");
      return;
    }
    // The child spins until it has used 300 ms of CPU itself, however busy the machine is.
    const spin =
      "const s = process.cpuUsage(); for (;;) { const u = process.cpuUsage(s); if (u.user + u.system >= 300000) break; }";
    const child = spawnSync(process.execPath, ["-e", spin]);
    assert.equal(child.status, 0);
    const spent = childrenCpuMicros(ticks) - start;
    assert.ok(spent >= 250_000, `a child that used 300 ms of CPU counted ${spent} µs`);
  });
});
