/**
 * The in-memory event store's bound, end to end (not a test): starts `partner-yield serve` with a
 * small heap (`--max-old-space-size`, default 128 MiB) on the in-memory stores, sends signed events
 * (a fresh idempotency key each) until the server answers 503 event_store_full, then checks that it
 * still answers a duplicate, /healthz, and reports the events accepted and the server's heap.
 *
 *   NODE_OPTIONS=--conditions=@partner-yield/source npx tsx bench/event-flood.ts [HEAP_MIB] [BODY_BYTES] [PORT]
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { DEMO_CREDENTIALS as DEMO } from "../packages/core/src/demo/index.js";
import { signBody } from "../packages/core/src/index.js";
import { BENCH_SERVER_ENV } from "./built-cli.js";

const heapMiB = Number(process.argv[2] ?? "128");
const bodyBytes = Number(process.argv[3] ?? "100");
const port = Number(process.argv[4] ?? "20100");
const CLI = fileURLToPath(new URL("../packages/server/src/cli.ts", import.meta.url));

const child = spawn(
  process.execPath,
  [
    `--max-old-space-size=${heapMiB}`,
    "--import",
    "tsx",
    CLI,
    "serve",
    "--port",
    String(port),
    "--log",
    "none",
    "--rate-limit-quota",
    "1000000000",
  ],
  {
    env: { ...process.env, ...BENCH_SERVER_ENV, NODE_OPTIONS: "--conditions=@partner-yield/source" },
    stdio: ["ignore", "pipe", "pipe"],
  },
);
let stderr = "";
child.stderr.on("data", (chunk) => {
  stderr += chunk;
});
let exited: number | null | undefined;
child.on("exit", (code) => {
  exited = code;
});
await new Promise<void>((resolve, reject) => {
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
    if (out.includes(`:${port}`)) resolve();
  });
  child.on("exit", () => reject(new Error(`the server exited: ${stderr}`)));
});

const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 8, pipelining: 1 });
function body(i: number): string {
  const pad = Math.max(0, bodyBytes - 90);
  return `{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"u":"${i}","p":"${"x".repeat(pad)}"}}`;
}
async function send(i: number): Promise<{ status: number; text: string }> {
  const text = body(i);
  const res = await pool.request({
    method: "POST",
    path: "/api/partner/webhooks/inbound",
    headers: {
      "x-api-key": DEMO.sandboxApiKey,
      "content-type": "application/json",
      "x-partner-event": "partner.user.created",
      "idempotency-key": `flood-${i}`,
      "x-partner-signature": signBody(DEMO.signingSecret, new TextEncoder().encode(text)),
    },
    body: text,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

const started = performance.now();
let accepted = 0;
let full: string | undefined;
for (let i = 0; full === undefined && exited === undefined; i += 8) {
  const batch = await Promise.all(
    Array.from({ length: 8 }, (_, k) => send(i + k).catch((e: Error) => ({ status: 0, text: e.message }))),
  );
  for (const r of batch) {
    if (r.status === 200) accepted++;
    else if (r.status === 503) full = r.text;
    else throw new Error(`unexpected ${r.status}: ${r.text}`);
  }
}
const duplicate = await send(0);
const health = await pool.request({ method: "GET", path: "/healthz" });
await health.body.text();
const vmRss = Number(
  /VmRSS:\s+(\d+)/.exec(
    await import("node:fs").then((fs) => fs.readFileSync(`/proc/${child.pid}/status`, "utf8")),
  )?.[1] ?? 0,
);
console.log(
  JSON.stringify(
    {
      heap_limit_mib: heapMiB,
      body_bytes: body(1).length,
      accepted,
      seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
      refusal: full === undefined ? `server exited (${exited})` : JSON.parse(full).detail,
      duplicate_after_full: `${duplicate.status} ${duplicate.text}`,
      healthz_after: health.statusCode,
      server_rss_mib: Math.round(vmRss / 1024),
    },
    null,
    2,
  ),
);
await pool.close();
child.kill("SIGTERM");
