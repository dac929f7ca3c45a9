/**
 * The rate-limit checks against a fake target whose headers say what the test wants: RL-02 is
 * sound in an exact rolling window, and "inconclusive" is a warning, never a pass.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { describe, test } from "node:test";
import { conclusive } from "../src/checks/rate-limit.js";
import { DEFAULTS } from "../src/config.js";
import { runConformance } from "../src/runner.js";

/** A fake target whose products answer with the RateLimit values `limit(n)` for the n-th request. */
async function fakeRateLimited(limit: (n: number) => string): Promise<{ url: string; server: Server }> {
  let n = 0;
  const server = createServer((_req, res) => {
    res.writeHead(200, {
      "content-type": "application/json; charset=utf-8",
      "ratelimit-policy": '"sandbox";q=100;w=60',
      ratelimit: `"sandbox";${limit(n++)}`,
    });
    res.end('{"success":true,"data":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, server };
}

async function rl02(limit: (n: number) => string) {
  const fake = await fakeRateLimited(limit);
  try {
    const report = await runConformance({
      baseUrl: fake.url,
      embedded: false,
      apiKey: "ypk_test_fake",
      signingSecret: undefined,
      otherEnvApiKey: undefined,
      foreignSlug: undefined,
      wallet: undefined,
      level: "reference",
      seed: 1,
      rpm: 6000,
      burst: 100,
      maxRequests: undefined,
      only: ["RL-02"],
      rateLimitProbe: false,
      plan: { yieldSamples: 2, productSample: 1, concurrentDuplicates: 2, probeBudget: DEFAULTS.probeBudget },
      timeoutMs: 2000,
    });
    return { result: report.results[0]!, report };
  } finally {
    fake.server.close();
  }
}

describe("RL-02 in an exact rolling window", () => {
  test("conclusive only when no counted request can leave the window before the next response", () => {
    assert.ok(conclusive(60, 0.1));
    assert.ok(!conclusive(1, 0));
    assert.ok(!conclusive(2, 1.2));
  });

  test("r repeating with t=1 (old requests leaving) is inconclusive: a warning, not a pass, exit 0", async () => {
    const { result, report } = await rl02((n) => `r=${17 - (n % 2)};t=1`);
    assert.equal(result.status, "warning", result.message);
    assert.match(result.message!, /inconclusive/);
    assert.equal(report.summary.passed, 0);
    assert.equal(report.summary.warned, 1);
    assert.equal(report.exitCode, 0);
  });

  test("r frozen while t says nothing can leave the window fails, as a header failure", async () => {
    const { result } = await rl02(() => "r=17;t=50");
    assert.equal(result.status, "failed");
    assert.equal(result.failureKind, "header");
    assert.match(result.message!, /should have dropped by one/);
    assert.equal(result.evidence.length, 2);
  });

  test("r counting down by one passes without a note", async () => {
    const { result } = await rl02((n) => `r=${90 - n};t=50`);
    assert.equal(result.status, "passed", result.message);
    assert.deepEqual(result.notes, []);
  });
});
