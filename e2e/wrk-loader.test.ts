/**
 * `bench:http --loader wrk`: the Lua script bench/http/wrk.ts writes makes wrk send the request
 * byte for byte (quotes, backslashes, control characters and UTF-8 in the body and headers), a new
 * value of the fresh header on every request, and its result line counts what wrk saw. wrk is a
 * Debian package (`apt-get install wrk`): without it these tests say so and skip, except under
 * CI=true, where .ci/run installs it and they fail instead.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { findWrk, luaString, parseResult, runWrk, WRK_INSTALL_HINT, wrkScript } from "../bench/http/wrk.js";
import { runBench } from "./support/processes.js";

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
    const body = JSON.stringify({ note: 'quote " backslash \\ tab \t newline \n café ₿', n: 1.1 });
    const request = {
      method: "POST" as const,
      path: "/api/partner/webhooks/inbound?x=1",
      headers: {
        "content-type": "application/json",
        "x-partner-signature": 'sha256=ab"c\\d',
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
      assert.equal(s.body.toString("utf8"), body);
      assert.equal(s.headers["content-length"], String(Buffer.byteLength(body)));
      assert.equal(s.headers["content-type"], "application/json");
      assert.equal(s.headers["x-partner-signature"], 'sha256=ab"c\\d');
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

describe("bench:http --loader", () => {
  test("a loader other than autocannon or wrk, or wrk with pipelining, is a usage error", async () => {
    const bad = await runBench("bench/http/run.ts", ["--loader", "ab"], 60_000);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'bench:http: --loader must be autocannon or wrk (got "ab"); see --help\n');
    const piped = await runBench("bench/http/run.ts", ["--loader", "wrk", "--pipelining", "2"], 60_000);
    assert.equal(piped.code, 2);
    assert.equal(
      piped.stderr,
      "bench:http: --pipelining is autocannon's: it does not go with --loader wrk; see --help\n",
    );
  });

  test("one short round of the signed POST in memory with wrk: every server answers every request with a 2xx, and wrk's CPU is measured", async (t) => {
    if (skipWithoutWrk(t)) return;
    const run = await runBench(
      "bench/http/run.ts",
      [
        "--scenarios",
        "post",
        "--loader",
        "wrk",
        "--rounds",
        "1",
        "--duration",
        "1",
        "--warmup",
        "1",
        "--connections",
        "4",
        "--port-base",
        "23500",
      ],
      120_000,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /wrk \([^)]+\) 4 connections, \d+ threads/);
    for (const server of ["bare node:http", "partner-yield"]) {
      const cells = run.stdout
        .split("\n")
        .map((line) => line.split("|").map((cell) => cell.trim()))
        .filter((c) => c[1] === "post" && c[2] === server);
      assert.ok(cells.length >= 2, `a row for ${server} in both tables:\n${run.stdout}`);
      const [table, machine] = cells as [string[], string[]];
      assert.ok(Number(table[3]) > 0, `${server} answered: ${table.join(" | ")}`);
      assert.equal(table.at(-2), "0", `${server}: no non-2xx answer or error`);
      assert.ok(Number(machine[4]) > 0, `${server}: wrk's CPU a request measured: ${machine.join(" | ")}`);
    }
  });
});
