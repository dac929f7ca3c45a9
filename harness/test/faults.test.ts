/**
 * Proof that the checks can fail, and that level spec accepts what interface.md allows: the clean
 * server passes every check; each injected fault makes the checks that should catch it fail; each
 * valid alternative (and all of them together) passes level spec and fails level reference.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CHECKS } from "../src/checks/registry.js";
import type { EmbeddedTarget } from "../src/embedded.js";
import { ALTERNATIVES, combinedAlternatives } from "../src/faults/alternatives.js";
import { FAULTS } from "../src/faults/faults.js";
import { failures, notPassed, runAgainst, startTarget } from "./support/targets.js";

const knownIds = new Set(CHECKS.map((c) => c.id));

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
  test("passes every spec check (a server of its own: the probe above spent the other's quota)", async () => {
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
  test("each fault names known checks; IDs are unique", () => {
    assert.ok(FAULTS.length >= 15, `${FAULTS.length} faults`);
    for (const fault of FAULTS) {
      const named = [...fault.caughtBy, ...(fault.warnedBy ?? [])];
      assert.ok(named.length > 0, fault.id);
      for (const id of named) assert.ok(knownIds.has(id), `${fault.id}: unknown check ${id}`);
    }
    const ids = [...FAULTS, ...ALTERNATIVES].map((f) => f.id);
    assert.equal(new Set(ids).size, ids.length, "fault and alternative IDs are unique");
  });

  for (const fault of FAULTS) {
    const levels = fault.atSpec ? (["reference", "spec"] as const) : (["reference"] as const);
    for (const level of levels) {
      const named = [...fault.caughtBy, ...(fault.warnedBy ?? [])];
      test(`${fault.id} (${level}): ${fault.description} → ${named.join(", ")}`, async () => {
        const target = await startTarget(fault);
        try {
          const atLevel = (id: string) =>
            level === "reference" || CHECKS.find((c) => c.id === id)?.level === "spec";
          const caught = fault.caughtBy.filter(atLevel);
          const warned = (fault.warnedBy ?? []).filter(atLevel);
          assert.ok(caught.length + warned.length > 0, "a fault marked atSpec needs a spec-level check");
          const report = await runAgainst(target, {
            level,
            only: [...caught, ...warned],
            rateLimitProbe: fault.rateLimitProbe ?? false,
          });
          for (const [ids, status] of [
            [caught, "failed"],
            [warned, "warning"],
          ] as const) {
            for (const id of ids) {
              const result = report.results.find((r) => r.id === id);
              assert.equal(
                result?.status,
                status,
                `${id} should be ${status} against ${fault.id}:\n${result?.message ?? "not run"}`,
              );
              assert.ok(result.evidence.length > 0, `${id} should show evidence`);
            }
          }
          assert.equal(report.exitCode, caught.length > 0 ? 1 : 0);
        } finally {
          await target.close();
        }
      });
    }
  }
});

describe("deployments that resolve interface.md's gaps their own way", () => {
  test("at least three alternatives, each citing the interface.md line that allows it", () => {
    assert.ok(ALTERNATIVES.length >= 3);
    for (const a of ALTERNATIVES) {
      assert.equal(a.allowedBy.document, "interface.md", a.id);
      assert.ok(a.failsAtReference.length > 0 && a.failsAtReference.every((id) => knownIds.has(id)), a.id);
    }
  });

  test("each alternative passes level spec (exit 0, no check failed) and fails level reference", async () => {
    // One server per alternative, all at once: the runs are independent.
    const outcomes = await Promise.all(
      ALTERNATIVES.map(async (alternative) => {
        const target = await startTarget(alternative);
        try {
          const spec = await runAgainst(target, { level: "spec" });
          const reference = await runAgainst(target, {
            level: "reference",
            only: [...alternative.failsAtReference],
          });
          return { alternative, spec, reference };
        } finally {
          await target.close();
        }
      }),
    );
    for (const { alternative, spec, reference } of outcomes) {
      assert.equal(failures(spec), "", `${alternative.id} at level spec`);
      assert.equal(spec.exitCode, 0, alternative.id);
      for (const id of alternative.failsAtReference)
        assert.equal(
          reference.results.find((r) => r.id === id)?.status,
          "failed",
          `${id} against ${alternative.id}`,
        );
      assert.equal(reference.exitCode, 1, alternative.id);
    }
  });

  test("all of them in one deployment: level spec exits 0, level reference exits 1", async () => {
    const target = await startTarget({ wrap: combinedAlternatives });
    try {
      const spec = await runAgainst(target, { level: "spec" });
      assert.equal(failures(spec), "");
      assert.equal(spec.exitCode, 0);
      // What interface.md leaves open is reported, never failed: an empty wallet's 404, data it wants.
      const skipped = spec.results.filter((r) => r.status === "skipped").map((r) => r.id);
      assert.ok(skipped.includes("EVT-20"), `EVT-20 skipped: ${skipped.join(", ")}`);
      const reference = await runAgainst(target, { level: "reference" });
      assert.equal(reference.exitCode, 1);
      const failed = new Set(reference.results.filter((r) => r.status === "failed").map((r) => r.id));
      for (const id of ALTERNATIVES.flatMap((a) => a.failsAtReference)) assert.ok(failed.has(id), id);
    } finally {
      await target.close();
    }
  });
});
