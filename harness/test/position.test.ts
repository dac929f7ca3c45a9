/**
 * The position checks: POS-09 recomputes every position from the deployment's fixtures with the
 * harness's own ERC-4626 math; POS-10 judges every position the run reads; level spec gives way
 * where interface.md does not say what an empty wallet gets.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DEFAULT_FIXTURES_DIR } from "@partner-yield/node-adapter";
import type { EmbeddedTarget } from "../src/embedded.js";
import { ALTERNATIVES } from "../src/faults/alternatives.js";
import { main } from "../src/main.js";
import { expectedPosition, loadReferenceFixtures, productsOfKey } from "../src/oracle/fixtures.js";
import { captureIo } from "./support/io.js";
import { notPassed, runAgainst, startTarget } from "./support/targets.js";

const dir = mkdtempSync(join(tmpdir(), "conformance-position-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let target: EmbeddedTarget;
before(async () => {
  target = await startTarget();
});
after(() => target.close());

const env = () => ({ PARTNER_API_KEY: target.apiKey });

describe("POS-09/POS-10: the position math", () => {
  test("the embedded fixtures are the default reference: both pass, for the wallet and a zero wallet", async () => {
    const report = await runAgainst(target, { only: ["POS-09", "POS-10"] });
    assert.equal(notPassed(report), "");
    const pos09 = report.results.find((r) => r.id === "POS-09")!;
    assert.ok(pos09.requests >= 4, "a zero wallet and --wallet in each product");
    assert.equal(report.results.find((r) => r.id === "POS-10")!.kind, "response");
  });

  test("the oracle reads the fixtures by itself: the documented example position", () => {
    const fixtures = loadReferenceFixtures(DEFAULT_FIXTURES_DIR);
    const product = productsOfKey(fixtures, target.apiKey)!.find((p) => p.slug === "usdc-base-prime")!;
    assert.deepEqual(expectedPosition(fixtures, product, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"), {
      shares: "1500.25",
      assets: "1556.437375",
      usd_value: "1556.12",
    });
  });

  test("without fixtures POS-09 is skipped with a clear reason", async () => {
    const report = await runAgainst(target, { only: ["POS-09"], fixtures: undefined });
    assert.equal(report.results[0]!.status, "skipped");
    assert.match(report.results[0]!.message!, /--fixtures DIR/);
  });

  test("--fixtures DIR against a base URL recomputes the positions; a bad DIR exits 2", async () => {
    const { out, io } = captureIo(env());
    const args = ["run", "--base-url", target.baseUrl, "--only", "POS-09", "--rpm", "6000"];
    const code = await main([...args, "--wallet", target.wallet, "--fixtures", DEFAULT_FIXTURES_DIR], io);
    assert.equal(code, 0, out.stdout);
    assert.match(out.stdout, /✔ POS-09/);
    const bad = captureIo(env());
    assert.equal(await main([...args, "--fixtures", join(dir, "nowhere")], bad.io), 2);
    assert.match(bad.out.stderr, /--fixtures .*nowhere.*file not found/);
  });
});

describe("an empty wallet at level spec (interface.md §4.3: not shown)", () => {
  test("a 404 for it skips POS-02 and SCH-03 with the reason, and fails POS-01 at reference", async () => {
    const alternative = ALTERNATIVES.find((a) => a.id === "empty-wallet-404")!;
    const faulty = await startTarget(alternative);
    try {
      const spec = await runAgainst(faulty, { level: "spec", only: ["POS-02", "SCH-03"], wallet: undefined });
      for (const result of spec.results) {
        assert.equal(result.status, "skipped", result.id);
        assert.match(result.message!, /holds nothing/);
      }
      const withWallet = await runAgainst(faulty, { level: "spec", only: ["POS-02", "POS-06"] });
      assert.equal(notPassed(withWallet), "", "--wallet gives an input whose outcome is shown");
      const reference = await runAgainst(faulty, { only: ["POS-01"] });
      assert.equal(reference.results[0]!.status, "failed");
    } finally {
      await faulty.close();
    }
  });
});
