/**
 * The run plan and its configuration: levels, costs, inputs that turn into skips, the signing
 * preflight, and the limits a plan must respect.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_FIXTURES_DIR } from "@partner-yield/node-adapter";
import { costOf } from "../src/checks/definition.js";
import { CHECKS } from "../src/checks/registry.js";
import { ConfigError, DEFAULT_PLAN as PLAN, parseBaseUrl, parseOnly } from "../src/config.js";
import { loadReferenceFixtures } from "../src/oracle/fixtures.js";
import { PREFLIGHT_REQUESTS } from "../src/preflight.js";
import { planRun, type RunSettings, runConformance, selectedBy } from "../src/runner.js";

const FIXTURES = loadReferenceFixtures(DEFAULT_FIXTURES_DIR);

function settings(overrides: Partial<RunSettings> = {}): RunSettings {
  return {
    baseUrl: "http://127.0.0.1:9",
    embedded: false,
    apiKey: "ypk_test_x",
    signingSecret: "whsec_x",
    otherEnvApiKey: "ypk_live_x",
    foreignSlug: "theirs",
    wallet: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    fixtures: FIXTURES,
    revokedApiKey: "ypk_test_revoked",
    level: "reference",
    seed: 1,
    rpm: 90,
    burst: 9,
    maxRequests: undefined,
    only: undefined,
    rateLimitProbe: false,
    plan: PLAN,
    timeoutMs: 2000,
    ...overrides,
  };
}

describe("planRun", () => {
  test("level spec runs only spec checks; reference runs all", () => {
    const spec = planRun(settings({ level: "spec" }));
    assert.ok(spec.checks.every((p) => p.check.level === "spec"));
    assert.equal(spec.excludedByLevel, CHECKS.filter((c) => c.level === "reference").length);
    assert.equal(planRun(settings()).checks.length, CHECKS.length);
  });

  test("the plan's request bound is discovery, the signing preflight and each runnable check's cost", () => {
    const plan = planRun(settings({ rateLimitProbe: true }));
    const total = 1 + PREFLIGHT_REQUESTS + CHECKS.reduce((n, c) => n + costOf(c, PLAN), 0);
    assert.equal(plan.requests, total);
    assert.equal(plan.preflight, PREFLIGHT_REQUESTS);
    assert.equal(planRun(settings({ only: ["AUTH"] })).preflight, 0, "no check signs an event");
    assert.equal(planRun(settings({ only: ["EVT-11"], level: "spec" })).preflight, PREFLIGHT_REQUESTS);
  });

  test("absent inputs become skips with the reason, and cost nothing", () => {
    const plan = planRun(
      settings({
        signingSecret: undefined,
        otherEnvApiKey: undefined,
        foreignSlug: undefined,
        wallet: undefined,
        fixtures: undefined,
        revokedApiKey: undefined,
      }),
    );
    const skip = (id: string) => plan.checks.find((p) => p.check.id === id)!;
    assert.match(skip("EVT-01").skipReason!, /PARTNER_SIGNING_SECRET/);
    assert.match(skip("AUTH-03").skipReason!, /PARTNER_OTHER_ENV_API_KEY/);
    assert.match(skip("PRD-07").skipReason!, /--foreign-slug/);
    assert.match(skip("POS-06").skipReason!, /--wallet/);
    assert.match(skip("RL-03").skipReason!, /--rate-limit-probe/);
    assert.match(skip("POS-09").skipReason!, /--fixtures DIR/);
    assert.match(skip("AUTH-06").skipReason!, /PARTNER_REVOKED_API_KEY/);
    assert.equal(skip("EVT-05").skipReason, undefined, "needs no secret: it sends none");
    assert.equal(skip("EVT-01").cost, 0);
  });

  test("--only selects IDs and prefixes, and refuses unknown ones", () => {
    const plan = planRun(settings({ only: ["EVT-03", "AUTH"] }));
    assert.deepEqual(
      plan.checks.map((p) => p.check.id),
      ["AUTH-01", "AUTH-02", "AUTH-03", "AUTH-04", "AUTH-05", "AUTH-06", "EVT-03"],
    );
    assert.throws(() => planRun(settings({ only: ["EVT-99"] })), ConfigError);
    assert.throws(
      () => planRun(settings({ only: ["EVT-03"], level: "spec" })),
      /selects no check of level spec/,
    );
    assert.ok(selectedBy(["RL"], "RL-03"));
    assert.ok(!selectedBy(["RL"], "RLX-01"));
    assert.deepEqual(parseOnly("evt-03, auth"), ["EVT-03", "AUTH"]);
    assert.throws(() => parseOnly("EVT_03"), ConfigError);
  });

  test("--max-requests refuses a plan that could exceed it", () => {
    assert.throws(() => planRun(settings({ maxRequests: 20 })), /more than --max-requests 20/);
    assert.equal(planRun(settings({ maxRequests: 20, only: ["AUTH-01", "PRD"] })).requests, 16);
  });
});

describe("configuration", () => {
  test("base URLs must be absolute http(s) without credentials, query or fragment", () => {
    assert.equal(parseBaseUrl("https://sandbox.example.com/"), "https://sandbox.example.com");
    assert.equal(parseBaseUrl("http://h:8080/prefix/"), "http://h:8080/prefix");
    for (const bad of ["sandbox.example.com", "ftp://h", "https://u:p@h", "https://h/?x=1"]) {
      assert.throws(() => parseBaseUrl(bad), ConfigError, bad);
    }
  });

  test("an unreachable target is a configuration error, not a failed check", async () => {
    await assert.rejects(
      runConformance(settings({ baseUrl: "http://127.0.0.1:1", only: ["AUTH-01"] })),
      /unreachable/,
    );
  });
});
