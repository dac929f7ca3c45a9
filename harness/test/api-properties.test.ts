/**
 * `properties --base-url`: the properties of CONTRACT §2 that the API shows, against a deployment
 * within a request budget. A conforming sandbox passes with a coverage record showing every class
 * of input, and its report lets an auditor recompute every position; one whose monthly yield is
 * rounded up (the rounding bug a core could ship) fails, with a shrunk counterexample, its seed and
 * the curl commands that reproduce it; one that answers 500 on large amounts fails (never a
 * discard); one without virtual shares fails P-16 and P-19; a deployment that answers no quote, or
 * a run without a wallet with holdings, is inconclusive (exit 1), never a pass.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { EmbeddedTarget } from "../src/embedded.js";
import { FAULTS } from "../src/faults/faults.js";
import type { HandlerWrapper } from "../src/faults/server.js";
import { main } from "../src/main.js";
import { API_PROPERTIES } from "../src/properties/api-properties.js";
import { captureIo } from "./support/io.js";
import { startTarget } from "./support/targets.js";

const ROUNDED_UP = FAULTS.find((f) => f.id === "monthly-rounded-up")!;
const NO_VIRTUAL_SHARES = FAULTS.find((f) => f.id === "no-virtual-shares")!;
const QUOTE_PROPERTIES = API_PROPERTIES.filter((p) => p.over === "quote").map((p) => p.id);
const POSITION_PROPERTIES = API_PROPERTIES.filter((p) => p.over === "positions").map((p) => p.id);

/** A fresh directory for report files. */
function reportDir(): string {
  return mkdtempSync(join(tmpdir(), "api-properties-"));
}

/** Base units of a canonical decimal at `digits` digits (the test's own reading, not the harness's). */
function units(text: string, digits: number): bigint {
  const [whole, fraction = ""] = text.split(".");
  assert.ok(fraction.length <= digits, `${text} has more than ${digits} digits`);
  return BigInt(whole! + fraction.padEnd(digits, "0"));
}

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

  test("every property the API shows holds, within the default budget of 90 requests, every class covered", async () => {
    const dir = reportDir();
    const { code, stdout } = await properties(
      target,
      ...["--seed", String(Math.floor(Math.random() * 1e9)), "--wallet", target.wallet],
      ...["--json", join(dir, "p.json"), "--junit", join(dir, "p.xml")],
    );
    assert.equal(code, 0, stdout);
    for (const p of API_PROPERTIES) assert.match(stdout, new RegExp(`^✔ ${p.id} `, "m"));
    const spent = Number(/· ([0-9]+) requests · seed -?[0-9]+$/m.exec(stdout)?.[1]);
    assert.ok(spent > 10 && spent <= 90, `${spent} requests`);
    assert.match(stdout, /at most 90 requests/);
    const report = JSON.parse(readFileSync(join(dir, "p.json"), "utf8"));
    assert.equal(report.inconclusive, 0);
    for (const r of report.results) {
      if (QUOTE_PROPERTIES.includes(r.id)) {
        for (const c of ["zero", "one unit", "max precision", "everyday", "huge"])
          assert.ok(r.coverage.amounts[c] >= 1, `${r.id}: amount class ${c}: ${JSON.stringify(r.coverage)}`);
        for (const c of ["decimals 6", "decimals 8", "loss product", "status active"])
          assert.ok(r.coverage.products[c] >= 1, `${r.id}: product class ${c}`);
      }
      if (POSITION_PROPERTIES.includes(r.id)) {
        for (const c of [
          "status active",
          "status paused",
          "status deprecated",
          "decimals 6",
          "decimals 8",
          "decimals 18",
        ])
          assert.ok(r.coverage.products[c] >= 1, `${r.id}: product class ${c}`);
        for (const c of ["wallet with holdings", "wallet without holdings"])
          assert.ok(r.coverage.wallets[c] >= 1, `${r.id}: ${c}`);
      }
    }
    const junit = readFileSync(join(dir, "p.xml"), "utf8");
    assert.match(
      junit,
      /<testcase classname="properties" name="P-16 [^"]*"><system-out>[^<]*wallets: [^<]*wallet with holdings/,
    );
  });

  test("an auditor recomputes every position of the run from the report alone", async () => {
    const dir = reportDir();
    const { code, stdout } = await properties(
      target,
      ...["--only", "P-16,P-17,P-19", "--wallet", target.wallet, "--json", join(dir, "p.json")],
    );
    assert.equal(code, 0, stdout);
    const report = JSON.parse(readFileSync(join(dir, "p.json"), "utf8"));
    const held = report.positions.filter((p: { answer: { shares: string } }) => p.answer.shares !== "0");
    assert.ok(held.length >= 4, `${held.length} positions with holdings`);
    for (const p of report.positions) {
      const { shares, assets, usd_value: usd, vault } = p.answer;
      const d: number = p.asset_decimals;
      const delta: number = vault.decimals_offset;
      // ERC-4626 convertToAssets with virtual shares (docs/math.md), in base units.
      const expected =
        (units(shares, d + delta) * (BigInt(vault.total_assets) + 1n)) /
        (BigInt(vault.total_supply) + 10n ** BigInt(delta));
      assert.equal(units(assets, d), expected, `${p.product_slug} ${p.wallet_address}`);
      if (expected === 0n) assert.equal(usd, "0");
      else {
        const [w, f = ""] = vault.usd_price.split(".");
        const cents = (expected * BigInt(w + f) * 100n) / (10n ** BigInt(d) * 10n ** BigInt(f.length));
        assert.equal(units(usd, 2), cents, `${p.product_slug}: usd_value`);
      }
      assert.match(p.curl, /^curl .*\/position\?address=0x[0-9a-fA-F]{40}/);
    }
    // The launch vault is where virtual shares show: 149.99985 USDT, not the naive 150.
    const launch = held.find((p: { product_slug: string }) => p.product_slug === "usdt-polygon-launch");
    assert.equal(launch.answer.assets, "149.99985");
    assert.match(
      stdout,
      /usdt-polygon-launch \(active, D = 6\) 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed: shares 0\.6, assets 149\.99985, usd_value 149\.99 · δ = 6, total_assets 250000000, total_supply 1000000000000, usd_price 1/,
    );
  });

  test("without a wallet with holdings the position properties are inconclusive (exit 1 unless --allow-inconclusive)", async () => {
    const dir = reportDir();
    const first = await properties(target, "--only", "P-16,P-19", "--junit", join(dir, "p.xml"));
    assert.equal(first.code, 1, first.stdout);
    assert.match(first.stdout, /^\? P-16 .*\(inconclusive after [0-9]+ positions/m);
    assert.match(
      first.stdout,
      /never exercised 1×: wallet with holdings \(0\) \(no wallet with holdings was read: pass --wallet ADDRESS\)/,
    );
    assert.doesNotMatch(first.stdout, /^✔ P-16/m);
    assert.match(
      readFileSync(join(dir, "p.xml"), "utf8"),
      /<error message="[^"]*wallet with holdings[^"]*" type="inconclusive">/,
    );
    const allowed = await properties(target, "--only", "P-16,P-19", "--allow-inconclusive");
    assert.equal(allowed.code, 0, allowed.stdout);
    assert.match(allowed.stdout, /0 passed, 0 failed, 2 inconclusive/);
  });

  test("--min-runs N: every class N times, made on purpose; a class short of it is inconclusive", async () => {
    const twice = await properties(
      target,
      "--only",
      "P-06,P-16",
      "--min-runs",
      "2",
      "--wallet",
      target.wallet,
    );
    assert.equal(twice.code, 0, twice.stdout);
    assert.match(
      twice.stdout,
      /amounts: zero 2, one unit 2, max precision [0-9]+, everyday [0-9]+, huge [0-9]+/,
    );
    // The sandbox lists one paused product: two positions (two wallets), never three.
    const thrice = await properties(target, "--only", "P-16", "--min-runs", "3", "--wallet", target.wallet);
    assert.equal(thrice.code, 1, thrice.stdout);
    assert.match(thrice.stdout, /^\? P-16 /m);
    assert.match(thrice.stdout, /never exercised 3×: [^\n]*status paused \(2\)/);
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
    const { code, stdout } = await properties(target, "--seed", "7", "--wallet", target.wallet);
    assert.match(stdout, /^✔ P-16 /m, "the shrinking of P-08 left the position properties their own budget");
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
      assert.match(stdout, /^\? P-06 .*\(inconclusive after [0-9]+ runs?, [0-9]+ discarded/m);
      assert.match(
        stdout,
        /inconclusive: ran [0-9]+ of 10 inputs, [0-9]+ cases discarded \(amounts the deployment refused/,
      );
      assert.doesNotMatch(stdout, /^✔ P-06/m);
      assert.match(stdout, /^✔ P-04 /m);
    } finally {
      await target.close();
    }
  });
});

describe("properties --base-url against a deployment that answers 500 on large amounts", () => {
  test("the properties fail on the 500 with the request and its curl: never a discard", async () => {
    const largeFails: HandlerWrapper = {
      wrap: (api) => ({
        async handle(req) {
          const amount = /[?&]amount=([0-9.]+)/.exec(`?${req.query ?? ""}`)?.[1] ?? "";
          if (!req.path.endsWith("/yield-calc") || (amount.split(".")[0] ?? "").length < 25)
            return api.handle(req);
          return { status: 500, headers: { "content-type": "application/json" }, body: '{"success":false}' };
        },
      }),
    };
    const target = await startTarget(largeFails);
    try {
      const { code, stdout } = await properties(target, "--only", "P-06,P-10,P-12");
      assert.equal(code, 1, stdout);
      for (const id of ["P-06", "P-10", "P-12"]) {
        const block = stdout.slice(stdout.indexOf(`✖ ${id} `));
        assert.match(stdout, new RegExp(`^✖ ${id} `, "m"));
        assert.match(block, /error: a valid amount got HTTP 500/);
        assert.match(block, /reproduce:\n\s+curl -sS -i '[^']*yield-calc\?amount=[0-9]{25,}/);
      }
      assert.ok(!stdout.includes(target.apiKey), "the key is never printed");
    } finally {
      await target.close();
    }
  });
});

describe("properties --base-url against a deployment without virtual shares", () => {
  test("P-16 fails on the launch vault, recomputed from the audit view (P-19 holds: the value is that of the assets served)", async () => {
    const target = await startTarget(NO_VIRTUAL_SHARES);
    try {
      const { code, stdout } = await properties(
        target,
        "--only",
        "P-16,P-17,P-19",
        "--wallet",
        target.wallet,
      );
      assert.equal(code, 1, stdout);
      assert.match(stdout, /^✖ P-16 /m);
      assert.match(stdout, /^✔ P-19 /m);
      const p16 = stdout.slice(stdout.indexOf("✖ P-16"));
      assert.match(p16, /counterexample: usdt-polygon-launch, 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed/);
      assert.match(
        p16,
        /error: assets 150 for shares 0\.6; floor\(600000000000 × \(250000000 \+ 1\) \/ \(1000000000000 \+ 10\^6\)\) = 149999850 base units, i\.e\. 149\.99985/,
      );
      assert.match(
        p16,
        /curl -sS -i '[^']*usdt-polygon-launch\/position\?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'/,
      );
    } finally {
      await target.close();
    }
  });
});

describe("properties --base-url against a deployment whose usd_value is wrong", () => {
  test("P-19 fails, recomputed from the assets and the audit view's price", async () => {
    const target = await startTarget(FAULTS.find((f) => f.id === "usd-value-wrong")!);
    try {
      const { code, stdout } = await properties(target, "--only", "P-19", "--wallet", target.wallet);
      assert.equal(code, 1, stdout);
      assert.match(stdout, /^✖ P-19 /m);
      assert.match(
        stdout,
        /error: (usd_value 99999\.99 for assets [0-9.]+ at usd_price [0-9.]+; floor to the cent is [0-9.]+|no assets, yet usd_value 99999\.99)/,
      );
    } finally {
      await target.close();
    }
  });
});
