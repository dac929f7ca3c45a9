/**
 * The check registry and the run plan: stable IDs, levels, costs, inputs that turn into skips,
 * and the limits a plan must respect.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_FIXTURES_DIR, readFixtureDir } from "@partner-yield/node-adapter";
import { CHECKS } from "../src/checks/registry.js";
import { CATEGORIES, costOf } from "../src/checks/types.js";
import { ConfigError, DEFAULTS, parseBaseUrl, parseOnly } from "../src/config.js";
import { referenceFixtures } from "../src/fixtures.js";
import { FAILED_AUTH_BUDGET, planRun, type RunSettings, runConformance, selectedBy } from "../src/runner.js";

const PLAN = {
  yieldSamples: DEFAULTS.yieldSamples,
  productSample: DEFAULTS.productSample,
  concurrentDuplicates: DEFAULTS.concurrentDuplicates,
  probeBudget: DEFAULTS.probeBudget,
};

const FIXTURES = referenceFixtures(readFixtureDir(DEFAULT_FIXTURES_DIR), "fixtures");

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

describe("the check registry", () => {
  test("holds at least 35 checks with unique, stable-looking IDs", () => {
    assert.ok(CHECKS.length >= 35, `${CHECKS.length} checks`);
    const ids = CHECKS.map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const c of CHECKS) assert.match(c.id, /^(AUTH|PRD|POS|YLD|EVT|ERR|SCH|RL)-[0-9]{2}$/);
  });

  test("covers every category, and IDs are numbered in order within each", () => {
    for (const category of CATEGORIES) {
      const ids = CHECKS.filter((c) => c.category === category).map((c) => c.id);
      assert.ok(ids.length > 0, category);
      const prefix = ids[0]!.split("-")[0];
      for (const [i, id] of ids.entries()) assert.equal(id, `${prefix}-${String(i + 1).padStart(2, "0")}`);
    }
  });

  test("spec checks cite interface.md; reference checks cite the CONTRACT", () => {
    for (const c of CHECKS) {
      if (c.level === "spec") assert.match(c.source, /interface\.md/, c.id);
      else assert.match(c.source, /CONTRACT §/, c.id);
      assert.ok(c.title.length > 10 && c.title.length < 100, c.id);
    }
  });

  test("a full plan keeps its failing-auth requests well under the target's 30 a minute", () => {
    const failing = CHECKS.reduce((n, c) => n + (c.failedAuth ?? 0), 0);
    assert.ok(failing <= FAILED_AUTH_BUDGET && FAILED_AUTH_BUDGET < 30, `${failing}`);
  });
});

describe("planRun", () => {
  test("level spec runs only spec checks; reference runs all", () => {
    const spec = planRun(settings({ level: "spec" }));
    assert.ok(spec.checks.every((p) => p.check.level === "spec"));
    assert.equal(spec.excludedByLevel, CHECKS.filter((c) => c.level === "reference").length);
    assert.equal(planRun(settings()).checks.length, CHECKS.length);
  });

  test("the plan's request bound is discovery plus each runnable check's cost", () => {
    const plan = planRun(settings({ rateLimitProbe: true }));
    const total = 1 + CHECKS.reduce((n, c) => n + costOf(c, PLAN), 0);
    assert.equal(plan.requests, total);
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
