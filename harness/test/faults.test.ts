/**
 * Proof that the checks can fail: the clean server passes every check, and each injected fault
 * makes exactly the checks that should catch it fail.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CHECKS } from "../src/checks/registry.js";
import type { EmbeddedTarget } from "../src/embedded.js";
import { FAULTS } from "../src/faults/faults.js";
import { notPassed, runAgainst, startTarget } from "./support/targets.js";

describe("the clean embedded server", () => {
  let target: EmbeddedTarget;
  before(async () => {
    target = await startTarget(undefined, 400);
  });
  after(() => target.close());

  test("passes every check at level reference, the rate-limit probe included", async () => {
    const report = await runAgainst(target, { rateLimitProbe: true });
    assert.equal(report.results.length, CHECKS.length);
    assert.equal(notPassed(report), "");
    assert.equal(report.exitCode, 0);
    assert.ok(report.requests <= report.plannedRequests, `${report.requests} > ${report.plannedRequests}`);
  });
});

describe("the clean embedded server, level spec", () => {
  test("passes every spec check, warning only about what interface.md leaves open", async () => {
    const target = await startTarget();
    try {
      const report = await runAgainst(target, { level: "spec" });
      assert.equal(notPassed(report), "");
      assert.ok(report.results.every((r) => r.level === "spec"));
      assert.equal(report.results.length, CHECKS.filter((c) => c.level === "spec").length);
    } finally {
      await target.close();
    }
  });
});

describe("every fault is caught by the checks expected to catch it", () => {
  test("there are at least 15 faults, each naming known checks", () => {
    assert.ok(FAULTS.length >= 15, `${FAULTS.length} faults`);
    const ids = new Set(CHECKS.map((c) => c.id));
    for (const fault of FAULTS) {
      assert.ok(fault.caughtBy.length > 0, fault.id);
      for (const id of fault.caughtBy) assert.ok(ids.has(id), `${fault.id}: unknown check ${id}`);
    }
    assert.equal(new Set(FAULTS.map((f) => f.id)).size, FAULTS.length, "fault IDs are unique");
  });

  for (const fault of FAULTS) {
    const levels = fault.atSpec ? (["reference", "spec"] as const) : (["reference"] as const);
    for (const level of levels) {
      test(`${fault.id} (${level}): ${fault.description} → ${fault.caughtBy.join(", ")}`, async () => {
        const target = await startTarget(fault);
        try {
          const expected =
            level === "spec"
              ? fault.caughtBy.filter((id) => CHECKS.find((c) => c.id === id)?.level === "spec")
              : fault.caughtBy;
          assert.ok(expected.length > 0, "a fault marked atSpec needs a spec-level check in caughtBy");
          const report = await runAgainst(target, {
            level,
            only: expected,
            rateLimitProbe: fault.rateLimitProbe ?? false,
          });
          for (const id of expected) {
            const result = report.results.find((r) => r.id === id);
            assert.equal(
              result?.status,
              "failed",
              `${id} should fail against ${fault.id}:\n${result?.message ?? "not run"}`,
            );
            assert.ok(result.evidence.length > 0, `${id} should show evidence`);
          }
          assert.equal(report.exitCode, 1);
        } finally {
          await target.close();
        }
      });
    }
  }
});
