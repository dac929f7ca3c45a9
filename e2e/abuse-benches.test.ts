/**
 * `pnpm flood` and `pnpm soak` run (briefly) and report what they promise. Their figures are
 * measurements, not checked here: only that the runs complete, the legitimate traffic saw no
 * unexpected answer, and each report line is printed. The full runs: docs/performance.md.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runBench } from "./support/processes.js";

describe("abuse benchmarks", () => {
  test("flood --help, then a short flood: the server is protected and the legitimate client served", async () => {
    const help = await runBench("bench/flood.ts", ["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--connections N/);
    const bad = await runBench("bench/flood.ts", ["--connection", "5"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, "flood: Unknown option '--connection'; see --help\n");
    const run = await runBench("bench/flood.ts", [
      "--connections",
      "300",
      "--duration",
      "2",
      "--server-flags=--max-connections 100",
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^flood connections: 300 connected/m);
    assert.match(run.stdout, /^server descriptors: peak \d+/m);
    const legit = /^legitimate: (\d+)\/(\d+) ok/m.exec(run.stdout);
    assert.ok(legit !== null, run.stdout);
    assert.ok(Number(legit[2]) > 0, "the legitimate client sent requests");
    assert.match(run.stdout, /^legitimate latency: p50 /m);
  });

  test("soak --help, then 5 s: no unexpected answer; memory and descriptors reported", async () => {
    const help = await runBench("bench/soak.ts", ["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--duration S/);
    const bad = await runBench("bench/soak.ts", ["--duration", "2"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'soak: --duration must be an integer from 5 to 3600 (got "2"); see --help\n');
    const run = await runBench("bench/soak.ts", ["--duration", "5", "--burst", "200"]);
    assert.match(run.stdout, /^unexpected: none$/m, run.stdout + run.stderr);
    assert.match(run.stdout, /^memory: rss at start [\d.]+ MiB, after warm-up/m);
    assert.match(run.stdout, /^descriptors: at start \d+, at the end \d+$/m);
    for (const kind of [
      "list",
      "event",
      "bad key",
      "bad signature",
      "malformed JSON",
      "oversize body",
      "slow body",
    ]) {
      assert.match(run.stdout, new RegExp(`${kind} \\d{3}×`), `the mix includes ${kind}`);
    }
  });
});
