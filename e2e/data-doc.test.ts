/**
 * docs/data.md, followed as a team would: its step-1 script makes a partner (key, hash, secret) that
 * authenticates and signs against the product of steps 2–4; and the JSON it shows is exactly what
 * examples/data holds, so the examples run on the documented data.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { createPartnerApi, loadFixtures } from "../packages/core/src/index.js";
import { ROOT } from "./support/processes.js";

const DOC = readFileSync(join(ROOT, "docs", "data.md"), "utf8");

/** The fenced block right after an HTML comment marker in docs/data.md. */
function blockAfter(marker: string): string {
  const at = DOC.indexOf(`<!-- ${marker} -->`);
  assert.ok(at >= 0, `docs/data.md has no <!-- ${marker} --> marker`);
  const match = /```[a-z]*\n([\s\S]*?)```/.exec(DOC.slice(at));
  assert.ok(match !== null, `no code block after ${marker}`);
  return match[1]!;
}

const DATA_FILES = ["partners.json", "products.json", "vaults.json", "prices.json"] as const;

test("the JSON of the worked example is exactly examples/data", () => {
  for (const file of DATA_FILES) {
    const shown = JSON.parse(blockAfter(`examples/data/${file}`));
    const held = JSON.parse(readFileSync(join(ROOT, "examples", "data", file), "utf8"));
    assert.deepEqual(shown, held, file);
  }
});

test("the step-1 script makes a partner whose key and secret work against the documented product", async () => {
  const script = blockAfter("test: run this script");
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ["--conditions=@partner-yield/source", "--import", "tsx", "--input-type=module", "--eval", script],
    { cwd: join(ROOT, "examples"), env: { ...process.env, NODE_OPTIONS: "" } },
  );
  const key = /API key \(.*\): (ypk_test_\w+)/.exec(stderr)?.[1];
  const secret = /signing secret \(.*\): (whsec_[\w-]+)/.exec(stderr)?.[1];
  assert.ok(key !== undefined && secret !== undefined, stderr);
  assert.ok(!stdout.includes(key), "the key itself must not reach partners.json");

  const files = Object.fromEntries(
    DATA_FILES.map((f) => [f, JSON.parse(readFileSync(join(ROOT, "examples", "data", f), "utf8"))]),
  ) as Record<(typeof DATA_FILES)[number], unknown>;
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadFixtures({ ...files, "partners.json": JSON.parse(stdout) }),
  });
  const quote = await api.handle({
    method: "GET",
    path: "/api/partner/products/acme-usdc-base/yield-calc",
    query: "amount=1000",
    headers: { "x-api-key": key },
  });
  assert.equal(quote.status, 200, quote.body ?? "");
  assert.match(quote.body ?? "", /"annual_yield":"47\.138"/);

  const body = JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: {},
  });
  const event = await api.handle({
    method: "POST",
    path: "/api/partner/webhooks/inbound",
    headers: {
      "content-type": "application/json",
      "x-api-key": key,
      "x-partner-event": "partner.user.created",
      "x-partner-signature": createHmac("sha256", secret).update(body).digest("hex"),
      "idempotency-key": "data-doc-1",
    },
    body: new TextEncoder().encode(body),
  });
  assert.equal(event.status, 200, event.body ?? "");
});
