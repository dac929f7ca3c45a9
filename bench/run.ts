/**
 * Micro-benchmarks of the core (not tests): operations per second of `handle()` for GET product
 * and yield-calc, and of signature verification of a 1 KiB body: `createHmac`, the node adapter's
 * port (`createHmac` with the key prepared once) and @noble/hashes.
 * Each group prints ratios against a baseline measured in the same run.
 *
 *   pnpm bench                 # default: ~1 s per case
 *   BENCH_SECONDS=3 pnpm bench # longer, steadier figures
 */
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { DEMO_CREDENTIALS as DEMO } from "../packages/core/src/demo/index.js";
import {
  createPartnerApi,
  FIXTURE_FILES,
  type HmacPort,
  loadFixtures,
  nobleHmacSha256,
  parseSignatureHeader,
  SignatureVerifier,
  signBody,
  unwrap,
} from "../packages/core/src/index.js";
import { nodeHmacSha256 } from "../packages/node-adapter/src/hmac.js";
import { parseFlags } from "./cli-flags.js";

parseFlags(
  "bench",
  `pnpm bench

Micro-benchmarks of the core: handle() operations per second for GET product and yield-calc, and
signature verification of a 1 KiB body (createHmac, the node adapter's port, @noble/hashes), each
group with ratios to a baseline of the same run. Takes no flags. Environment: BENCH_SECONDS
(default 1 s a case; 3 for steadier figures).
`,
  {},
);

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "1");
if (!(SECONDS > 0)) {
  console.error("BENCH_SECONDS must be a positive number");
  process.exit(2);
}

interface Result {
  name: string;
  opsPerSecond: number;
}

/** Runs `fn` in batches for about SECONDS after a short warm-up; returns operations per second. */
async function measure(name: string, fn: () => unknown | Promise<unknown>): Promise<Result> {
  const batch = 256;
  const warmUntil = performance.now() + 200;
  while (performance.now() < warmUntil) for (let i = 0; i < batch; i++) await fn();
  let ops = 0;
  const start = performance.now();
  const end = start + SECONDS * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < batch; i++) await fn();
    ops += batch;
  }
  const elapsed = (performance.now() - start) / 1000;
  return { name, opsPerSecond: ops / elapsed };
}

function report(title: string, baseline: Result, others: Result[]): void {
  console.log(`\n${title}`);
  for (const r of [baseline, ...others]) {
    const ratio = r.opsPerSecond / baseline.opsPerSecond;
    console.log(
      `  ${r.name.padEnd(44)} ${Math.round(r.opsPerSecond).toLocaleString("en-US").padStart(12)} ops/s  ${ratio.toFixed(2)}× baseline`,
    );
  }
}

const files = Object.fromEntries(
  FIXTURE_FILES.map((f) => [
    f,
    JSON.parse(readFileSync(new URL(`../fixtures/${f}`, import.meta.url), "utf8")),
  ]),
) as Record<(typeof FIXTURE_FILES)[number], unknown>;
const api = createPartnerApi({
  environment: "sandbox",
  ...loadFixtures(files),
  rateLimitOverride: 1_000_000_000,
});
const headers = { "x-api-key": DEMO.sandboxApiKey };
const get = (path: string, query = "") =>
  api.handle({ method: "GET", path, query, headers, clientAddress: "127.0.0.1" });

console.log(`partner-yield micro-benchmarks (node ${process.version}, ${SECONDS} s per case)`);

const notFound = await measure("handle(): unknown route → 404 (baseline)", () =>
  api.handle({ method: "GET", path: "/api/partner/nope", headers }),
);
const product = await measure("handle(): GET product", () => get("/api/partner/products/usdc-base-prime"));
const list = await measure("handle(): GET products (6)", () => get("/api/partner/products"));
const quote = await measure("handle(): GET yield-calc", () =>
  get("/api/partner/products/usdc-base-prime/yield-calc", "amount=123456.789"),
);
report("handle()", notFound, [product, list, quote]);

const body = new TextEncoder().encode(
  JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { blob: "x".repeat(940) },
  }),
);
if (body.byteLength < 1000 || body.byteLength > 1100)
  throw new Error(`body is ${body.byteLength} bytes, want ~1 KiB`);
const signature = unwrap(parseSignatureHeader(signBody(DEMO.signingSecret, body)));
const nodeHmac: HmacPort = {
  prepare: (key) => ({ digest: (message) => createHmac("sha256", key).update(message).digest() }),
};
const viaNode = new SignatureVerifier([DEMO.signingSecret], nodeHmac);
const viaAdapter = new SignatureVerifier([DEMO.signingSecret], nodeHmacSha256);
const viaNoble = new SignatureVerifier([DEMO.signingSecret], nobleHmacSha256);
if (
  !viaNode.verify(body, signature) ||
  !viaAdapter.verify(body, signature) ||
  !viaNoble.verify(body, signature)
)
  throw new Error("verification failed");
const nodeResult = await measure("verify 1 KiB: createHmac (baseline)", () =>
  viaNode.verify(body, signature),
);
const adapterResult = await measure("verify 1 KiB: nodeHmacSha256 (createHmac, key prepared once)", () =>
  viaAdapter.verify(body, signature),
);
const nobleResult = await measure("verify 1 KiB: @noble/hashes, pre-keyed", () =>
  viaNoble.verify(body, signature),
);
report("signature verification (1 KiB body)", nodeResult, [adapterResult, nobleResult]);
