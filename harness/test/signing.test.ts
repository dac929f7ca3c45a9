/**
 * The signing-secret preflight: a wrong secret is a configuration error (exit 2, like a wrong
 * API key), at both levels, whatever checks are selected; and no event check passes on a request
 * the target may have refused for its signature.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { EmbeddedTarget } from "../src/embedded.js";
import { ALTERNATIVES } from "../src/faults/alternatives.js";
import type { HandlerWrapper } from "../src/faults/server.js";
import { main } from "../src/main.js";
import { captureIo } from "./support/io.js";
import { runAgainst, startTarget } from "./support/targets.js";

const EVENTS = "/api/partner/webhooks/inbound";
const WRONG_SECRET = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

describe("a wrong signing secret", () => {
  let target: EmbeddedTarget;
  before(async () => {
    target = await startTarget();
  });
  after(() => target.close());

  for (const args of [
    ["--level", "reference"],
    ["--level", "spec"],
    ["--level", "spec", "--only", "EVT-11"],
  ]) {
    test(`is exit 2 with a clear message: ${args.join(" ")}`, async () => {
      const { out, io } = captureIo({ PARTNER_API_KEY: target.apiKey, PARTNER_SIGNING_SECRET: WRONG_SECRET });
      const code = await main(["run", "--base-url", target.baseUrl, "--rpm", "6000", ...args], io);
      assert.equal(code, 2, out.stdout);
      assert.match(
        out.stderr,
        /refused an event signed with PARTNER_SIGNING_SECRET .*exactly as it refuses one signed with a random secret: check PARTNER_SIGNING_SECRET/,
      );
      assert.ok(!out.stderr.includes(WRONG_SECRET) && !out.stdout.includes(WRONG_SECRET), "never printed");
      assert.doesNotMatch(out.stdout, /✔ EVT/, "no event check ran");
    });
  }

  test("names the flag when the secret came from --signing-secret", async () => {
    const { out, io } = captureIo({ PARTNER_API_KEY: target.apiKey });
    const code = await main(
      ["run", "--base-url", target.baseUrl, "--only", "EVT-01", "--signing-secret", WRONG_SECRET],
      io,
    );
    assert.equal(code, 2);
    assert.match(out.stderr, /check the secret passed with --signing-secret/);
  });

  test("is caught whatever the target's status codes and error envelope (level spec)", async () => {
    const other = await startTarget(ALTERNATIVES.find((a) => a.id === "other-status-codes"));
    try {
      const { out, io } = captureIo({ PARTNER_API_KEY: other.apiKey, PARTNER_SIGNING_SECRET: WRONG_SECRET });
      assert.equal(
        await main(["run", "--base-url", other.baseUrl, "--level", "spec", "--only", "EVT"], io),
        2,
      );
      assert.match(out.stderr, /HTTP 403/);
    } finally {
      await other.close();
    }
  });

  test("the right secret passes the preflight: its two requests are counted in the plan", async () => {
    const report = await runAgainst(target, { only: ["EVT-01"] });
    assert.equal(report.results[0]!.status, "passed");
    assert.equal(report.requests, 1 + 2 + 1, "the product list, the preflight's two events, EVT-01's");
  });
});

/** Every refused event answered alike: a missing key cannot be told from a bad signature. */
const SAME_REFUSAL: HandlerWrapper = {
  wrap: (api) => ({
    async handle(req) {
      const res = await api.handle(req);
      if (req.path !== EVENTS || res.status < 400) return res;
      return { ...res, status: 401, body: JSON.stringify({ success: false, error: "refused" }) };
    },
  }),
};

/** Refuses every correctly signed event (the content of data is its own business). */
const REFUSES_CONTENT: HandlerWrapper = {
  wrap: (api) => ({
    async handle(req) {
      const res = await api.handle(req);
      if (req.path !== EVENTS || res.status !== 200) return res;
      return {
        ...res,
        status: 400,
        body: JSON.stringify({ success: false, error: "data.account_ref is required" }),
      };
    },
  }),
};

describe("no event check passes on a refusal that may be for the signature", () => {
  test("a refusal shaped like a bad signature's is inconclusive at level spec: a warning", async () => {
    const target = await startTarget(SAME_REFUSAL);
    try {
      const report = await runAgainst(target, {
        level: "spec",
        only: ["EVT-11", "EVT-16", "EVT-05", "EVT-01"],
      });
      const status = (id: string) => report.results.find((r) => r.id === id);
      for (const id of ["EVT-11", "EVT-16"]) {
        assert.equal(status(id)?.status, "warning", id);
        assert.match(status(id)!.message!, /exactly as it refuses a wrong signature/);
      }
      assert.equal(status("EVT-05")?.status, "passed", "refusing an unsigned event is the point");
      assert.equal(status("EVT-01")?.status, "passed");
      assert.equal(report.exitCode, 0);
    } finally {
      await target.close();
    }
  });

  test("a target that refuses even a well-formed signed event: refusals prove nothing, acceptances are skipped", async () => {
    const target = await startTarget(REFUSES_CONTENT);
    try {
      const report = await runAgainst(target, {
        level: "spec",
        only: ["EVT-01", "EVT-06", "EVT-08", "EVT-11"],
      });
      const result = (id: string) => report.results.find((r) => r.id === id)!;
      assert.equal(result("EVT-01").status, "skipped");
      assert.match(result("EVT-01").message!, /content of data open/);
      for (const id of ["EVT-06", "EVT-08", "EVT-11"]) {
        assert.equal(result(id).status, "warning", id);
        assert.match(result(id).message!, /refuses even a correctly signed, well-formed event/);
      }
      assert.equal(report.summary.passed, 0, "nothing passed on a refusal that proves nothing");
      // At level reference the codes tell: a refused event fails; a missing key's 400 is its own.
      const reference = await runAgainst(target, { only: ["EVT-01", "EVT-11"] });
      assert.equal(reference.results.find((r) => r.id === "EVT-01")?.status, "failed");
      assert.equal(reference.results.find((r) => r.id === "EVT-11")?.status, "passed");
    } finally {
      await target.close();
    }
  });
});

describe("a 429 is the run hitting a limit, not a broken rule", () => {
  test("a check whose request was rate limited ends with a warning, never a failure", async () => {
    let refused = false;
    const limitsOnce: HandlerWrapper = {
      wrap: (api) => ({
        async handle(req) {
          const key = req.headers["idempotency-key"] ?? "";
          if (!refused && key.includes("-EVT-01-")) {
            refused = true;
            return { status: 429, headers: { "content-type": "text/plain" }, body: "slow down" };
          }
          return api.handle(req);
        },
      }),
    };
    const target = await startTarget(limitsOnce);
    try {
      const report = await runAgainst(target, { only: ["EVT-01"] });
      const result = report.results[0]!;
      assert.equal(result.status, "warning", result.message);
      assert.match(result.message!, /rate limited \(429\).*lower --rpm/);
      assert.equal(report.exitCode, 0);
    } finally {
      await target.close();
    }
  });
});
