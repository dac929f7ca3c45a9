/**
 * `properties --base-url`: the properties of CONTRACT §2 that the API shows, against a deployment
 * within a request budget. A conforming sandbox passes; one whose monthly yield is rounded up (the
 * rounding bug a core could ship) fails, with a shrunk counterexample, its seed and the curl
 * commands that reproduce it; a deployment that answers no quote ran nothing, which is an error.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { EmbeddedTarget } from "../src/embedded.js";
import { FAULTS } from "../src/faults/faults.js";
import type { HandlerWrapper } from "../src/faults/server.js";
import { main } from "../src/main.js";
import { API_PROPERTIES } from "../src/properties/api-properties.js";
import { captureIo } from "./support/io.js";
import { startTarget } from "./support/targets.js";

const ROUNDED_UP = FAULTS.find((f) => f.id === "monthly-rounded-up")!;

async function properties(target: EmbeddedTarget, ...args: string[]) {
  const captured = captureIo({ PARTNER_API_KEY: target.apiKey });
  const code = await main(
    ["properties", "--base-url", target.baseUrl, "--rpm", "6000", ...args],
    captured.io,
  );
  return { code, ...captured.out };
}

describe("properties --base-url against a conforming sandbox", () => {
  let target: EmbeddedTarget;
  before(async () => {
    target = await startTarget();
  });
  after(() => target.close());

  test("every property the API shows holds, within the default budget of 90 requests", async () => {
    const { code, stdout } = await properties(target, "--seed", "11", "--wallet", target.wallet);
    assert.equal(code, 0, stdout);
    for (const p of API_PROPERTIES) assert.match(stdout, new RegExp(`^✔ ${p.id} `, "m"));
    const spent = Number(/· ([0-9]+) requests · seed 11$/m.exec(stdout)?.[1]);
    assert.ok(spent > 10 && spent <= 90, `${spent} requests`);
    assert.match(stdout, /at most 90 requests/);
  });

  test("a budget too small for the runs is refused before any request (exit 2)", async () => {
    const { code, stderr } = await properties(target, "--runs", "50", "--max-requests", "40");
    assert.equal(code, 2);
    assert.match(stderr, /more than --max-requests 40; lower --runs/);
  });

  test("--only takes the properties the API can show, and says which those are", async () => {
    const { code, stderr } = await properties(target, "--only", "P-07");
    assert.equal(code, 2);
    assert.match(stderr, /P-07 cannot be checked through the API/);
  });
});

describe("properties --base-url against a deployment whose monthly yield is rounded up", () => {
  let target: EmbeddedTarget;
  before(async () => {
    target = await startTarget(ROUNDED_UP);
  });
  after(() => target.close());

  test("fails (exit 1): P-08 and P-12, shrunk, with seed, replay and curl", async () => {
    const { code, stdout } = await properties(target, "--seed", "7");
    assert.equal(code, 1, stdout);
    assert.match(stdout, /^✖ P-08 /m);
    assert.match(stdout, /^✖ P-12 /m);
    assert.match(stdout, /^✔ P-06 /m, "the annual figure is right");
    const p08 = stdout.slice(stdout.indexOf("✖ P-08"));
    assert.match(p08, /counterexample: [a-z0-9-]+, P₁ = /);
    assert.match(p08, /seed 7, path "[0-9:]+"/);
    assert.match(
      p08,
      /replay: pnpm properties --base-url http:\/\/127\.0\.0\.1:[0-9]+ --only P-08 --seed 7 --path "[0-9:]+"/,
    );
    assert.match(
      p08,
      /reproduce:\n\s+curl -sS -i 'http:\/\/127\.0\.0\.1:[0-9]+\/api\/partner\/products\/[a-z0-9-]+\/yield-calc\?amount=[0-9.]+' -H "X-Api-Key: \$PARTNER_API_KEY"/,
    );
    assert.ok(!stdout.includes(target.apiKey), "the key is never printed");
    const spent = Number(/· ([0-9]+) requests · seed 7$/m.exec(stdout)?.[1]);
    assert.ok(spent <= 90, `${spent} requests: the budget holds, shrinking included`);
  });

  test("the replay line replays exactly the counterexample", async () => {
    const first = await properties(target, "--seed", "7", "--only", "P-08");
    const replay = /replay: pnpm properties (.*)$/m.exec(first.stdout)?.[1];
    assert.ok(replay !== undefined, first.stdout);
    const args = replay.match(/"[^"]*"|\S+/g)!.map((a) => a.replace(/^"|"$/g, ""));
    const captured = captureIo({ PARTNER_API_KEY: target.apiKey });
    assert.equal(await main(["properties", ...args, "--rpm", "6000"], captured.io), 1);
    const counterexample = (text: string) => /counterexample: (.*)$/m.exec(text)?.[1];
    assert.equal(counterexample(captured.out.stdout), counterexample(first.stdout));
    assert.match(captured.out.stdout, /failed after 1 run,/);
  });
});

describe("properties --base-url against a deployment that quotes nothing", () => {
  test("the quote properties ran 0 inputs: an error, not a pass", async () => {
    const refuseQuotes: HandlerWrapper = {
      wrap: (api) => ({
        async handle(req) {
          if (!req.path.endsWith("/yield-calc")) return api.handle(req);
          return { status: 400, headers: { "content-type": "application/json" }, body: '{"success":false}' };
        },
      }),
    };
    const target = await startTarget(refuseQuotes);
    try {
      const { code, stdout } = await properties(target, "--seed", "3", "--only", "P-06,P-04");
      assert.equal(code, 1);
      assert.match(stdout, /✖ P-06 .*\(failed after 0 runs, [0-9]+ discarded/);
      assert.match(
        stdout,
        /ran 0 inputs, [0-9]+ cases discarded \(amounts the deployment refused\): nothing was tested/,
      );
      assert.match(stdout, /^✔ P-04 /m);
    } finally {
      await target.close();
    }
  });
});
