/**
 * Soak run (not a test): a `partner-yield serve` child under a steady mix of every endpoint, bad
 * requests (bad key, bad signature, malformed JSON, oversize body), slow requests (headers and
 * body trickled over 2 s) and, once a minute, a burst of idle connections; reports unexpected
 * answers (a 5xx or a connection failure on a legitimate request, any other status than the one
 * expected on a bad one), resident memory after warm-up against the end (the lowest sample of
 * the first third after warm-up against the lowest of the last third: within 10 %), and the
 * server's open descriptors at the start against the end. Loopback only, bounded.
 *
 *   pnpm soak                      # 3 minutes, a progress line every 10 s
 *   pnpm soak --duration 20
 *
 * Exit status 1 when there were unexpected answers, memory grew over 10 %, or descriptors leaked.
 */
import { connect, type Socket } from "node:net";
import { Pool } from "undici";
import { DEMO_CREDENTIALS as DEMO } from "../packages/core/src/demo/index.js";
import { signBody } from "../packages/core/src/index.js";
import { intFlagOf, parseFlags } from "./cli-flags.js";
import { openFds, rssMiB, startServerChild } from "./server-child.js";

const HELP = `pnpm soak [options]: a long mixed run against a server it starts

  --duration S        seconds to run (default 180, 5 to 3600); a progress line every 10 s
  --burst N           idle connections of each once-a-minute flood burst (default 2000)
  --server-flags="…"  extra flags for \`partner-yield serve\` (always: --port 0 --log none
                      --rate-limit-quota 1000000000)
  -h, --help          this text
`;

const values = parseFlags("soak", HELP, {
  duration: { type: "string" },
  burst: { type: "string" },
  "server-flags": { type: "string" },
});
const intFlag = intFlagOf("soak");
const DURATION_S = intFlag("duration", values.duration, 180, 5, 3600);
const BURST = intFlag("burst", values.burst, 2000, 0, 20_000);
const serverFlags = (values["server-flags"] ?? "").split(/\s+/).filter((f) => f !== "");
/** Memory is compared from the end of warm-up: 20 s, or a fifth of a short run. */
const WARM_UP_MS = Math.min(20_000, (DURATION_S * 1000) / 5);

const KEY = DEMO.sandboxApiKey;
const API = "/api/partner";
const INBOUND = `${API}/webhooks/inbound`;
const PRODUCT = "usdc-base-prime";
const ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/** Events come from a fixed set of idempotency keys (replays after the first round), so the
 * in-memory store does not grow with the run and memory measures leaks, not data. */
const EVENT_KEYS = 200;

function eventBody(n: number, extra = ""): string {
  return JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: `soak-${n}${extra}` },
  });
}
function signed(body: string, idempotencyKey: string): Record<string, string> {
  return {
    "content-type": "application/json",
    "x-api-key": KEY,
    "x-partner-event": "partner.user.created",
    "x-partner-signature": signBody(DEMO.signingSecret, new TextEncoder().encode(body)),
    "idempotency-key": idempotencyKey,
  };
}

interface Kind {
  readonly name: string;
  /**
   * Legitimate (from 127.0.0.1): a 2xx. Bad (from 127.0.3.x, so the failed-authentication limit
   * on that address never touches the legitimate traffic): `expect`, or 429 once that limit is hit.
   */
  readonly expect?: number;
  readonly request: () => { method: string; path: string; headers: Record<string, string>; body?: string };
}
let counter = 0;
const KINDS: Kind[] = [
  {
    name: "list",
    request: () => ({ method: "GET", path: `${API}/products`, headers: { "x-api-key": KEY } }),
  },
  {
    name: "product",
    request: () => ({ method: "GET", path: `${API}/products/${PRODUCT}`, headers: { "x-api-key": KEY } }),
  },
  {
    name: "position",
    request: () => ({
      method: "GET",
      path: `${API}/products/${PRODUCT}/position?address=${ADDRESS}`,
      headers: { "x-api-key": KEY },
    }),
  },
  {
    name: "yield-calc",
    request: () => ({
      method: "GET",
      path: `${API}/products/${PRODUCT}/yield-calc?amount=1000`,
      headers: { "x-api-key": KEY },
    }),
  },
  {
    name: "event",
    request: () => {
      const n = counter++ % EVENT_KEYS;
      const body = eventBody(n);
      return { method: "POST", path: INBOUND, headers: signed(body, `soak-${n}`), body };
    },
  },
  { name: "openapi", request: () => ({ method: "GET", path: `${API}/openapi.json`, headers: {} }) },
  { name: "healthz", request: () => ({ method: "GET", path: "/healthz", headers: {} }) },
  { name: "readyz", request: () => ({ method: "GET", path: "/readyz", headers: {} }) },
  {
    name: "bad key",
    expect: 401,
    request: () => ({ method: "GET", path: `${API}/products`, headers: { "x-api-key": "ypk_test_wrong" } }),
  },
  {
    name: "bad signature",
    expect: 401,
    request: () => {
      const body = eventBody(1);
      return {
        method: "POST",
        path: INBOUND,
        headers: { ...signed(body, "soak-bad-sig"), "x-partner-signature": "0".repeat(64) },
        body,
      };
    },
  },
  {
    name: "malformed JSON",
    expect: 400,
    request: () => {
      const body = '{"event_type": "partner.user.created", ';
      return { method: "POST", path: INBOUND, headers: signed(body, "soak-bad-json"), body };
    },
  },
  {
    name: "oversize body",
    expect: 413,
    request: () => {
      const body = eventBody(2, "x".repeat(70_000));
      return { method: "POST", path: INBOUND, headers: signed(body, "soak-big"), body };
    },
  },
];

const server = await startServerChild(["--rate-limit-quota", "1000000000", ...serverFlags]);
process.stdout.write(`soak: ${DURATION_S} s against pid ${server.pid} ${serverFlags.join(" ")}\n`);
const fdsAtStart = openFds(server.pid);
const rssAtStart = rssMiB(server.pid);
const start = performance.now();
const deadline = start + DURATION_S * 1000;
const live = () => performance.now() < deadline;

const counts = new Map<string, number>();
const unexpected = new Map<string, number>();
const note = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
let answered = 0;

const poolFrom = (localAddress: string) =>
  new Pool(server.url, {
    connections: 8,
    localAddress,
    connect: { timeout: 10_000 },
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
const pool = poolFrom("127.0.0.1");
/** Bad requests rotate over 20 addresses, so most reach the check they are meant for before the
 * failed-authentication limit (30 a minute per address) answers 429. */
const badPools = Array.from({ length: 20 }, (_, i) => poolFrom(`127.0.3.${i + 1}`));
async function mixWorker(offset: number): Promise<void> {
  for (let i = offset; live(); i++) {
    const kind = KINDS[i % KINDS.length]!;
    const r = kind.request();
    try {
      const res = await (kind.expect === undefined ? pool : badPools[i % badPools.length]!).request({
        ...r,
        body: r.body ?? null,
      });
      await res.body.text();
      answered++;
      note(counts, `${kind.name} ${res.statusCode}`);
      const fine =
        kind.expect === undefined
          ? res.statusCode >= 200 && res.statusCode < 300
          : res.statusCode === kind.expect || res.statusCode === 429;
      if (!fine) note(unexpected, `${kind.name}: ${res.statusCode}`);
    } catch (error) {
      note(unexpected, `${kind.name}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).name}`);
    }
  }
}

/** One request trickled in two halves 2 s apart (headers, or body); any answer below 500 is fine. */
function slowRequest(part: "headers" | "body"): Promise<void> {
  const body = eventBody(3);
  const head = [
    `POST ${INBOUND} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Connection: close",
    ...Object.entries(signed(body, "soak-slow")).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
    "",
    "",
  ].join("\r\n");
  const data = head + body;
  const cut = part === "headers" ? Math.floor(head.length / 2) : head.length + Math.floor(body.length / 2);
  return new Promise((resolve) => {
    const socket = connect(server.port, "127.0.0.1");
    let reply = "";
    let timer: NodeJS.Timeout | undefined;
    socket.on("connect", () => {
      socket.write(data.slice(0, cut));
      timer = setTimeout(() => socket.write(data.slice(cut)), 2_000);
    });
    socket.on("data", (d: Buffer) => {
      reply += d.toString("latin1");
    });
    socket.on("error", (error: NodeJS.ErrnoException) => note(unexpected, `slow ${part}: ${error.code}`));
    socket.on("close", () => {
      clearTimeout(timer);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? "0");
      note(counts, `slow ${part} ${status}`);
      if (status === 0 || status >= 500) note(unexpected, `slow ${part}: ${status || "no answer"}`);
      resolve();
    });
  });
}
async function slowWorker(): Promise<void> {
  while (live()) await Promise.all([slowRequest("headers"), slowRequest("body")]);
}

/** Once a minute (first after 30 s): BURST idle connections (GET /healthz, then silence) for 5 s. */
async function burstWorker(): Promise<void> {
  let next = start + Math.min(30_000, (DURATION_S * 1000) / 3);
  while (live()) {
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(next, deadline) - performance.now())));
    if (!live() || BURST === 0) return;
    const sockets: Socket[] = [];
    await Promise.all(
      Array.from(
        { length: BURST },
        (_, i) =>
          new Promise<void>((resolve) => {
            const s = connect({
              port: server.port,
              host: "127.0.0.1",
              localAddress: `127.0.2.${(i % 50) + 1}`,
            });
            sockets.push(s);
            s.on("error", () => resolve());
            s.on("close", () => resolve());
            s.on("connect", () => {
              s.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
              resolve();
            });
          }),
      ),
    );
    note(counts, "burst");
    await new Promise((r) => setTimeout(r, 5_000));
    for (const s of sockets) s.destroy();
    next += 60_000;
  }
}

let rssAfterWarmUp = Number.NaN;
const warmUp = setTimeout(() => {
  rssAfterWarmUp = rssMiB(server.pid);
}, WARM_UP_MS);
/** Resident memory every second: [ms since start, MiB]. */
const rssSamples: [number, number][] = [];
const rssSampler = setInterval(() => rssSamples.push([performance.now() - start, rssMiB(server.pid)]), 1000);
let lastAnswered = 0;
const progress = setInterval(() => {
  const s = Math.round((performance.now() - start) / 1000);
  const bad = [...unexpected.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(
    `${String(s).padStart(4)} s  ${(answered - lastAnswered) / 10} req/s  rss ${rssMiB(server.pid)} MiB  fds ${openFds(server.pid)}  unexpected ${bad}\n`,
  );
  lastAnswered = answered;
}, 10_000);

await Promise.all([...Array.from({ length: 8 }, (_, i) => mixWorker(i * 3)), slowWorker(), burstWorker()]);
clearInterval(progress);
clearTimeout(warmUp);
clearInterval(rssSampler);
await Promise.all([pool, ...badPools].map((p) => p.close()));
const rssAtEnd = rssMiB(server.pid);
// Connections the client closed are gone from the server within a moment.
let fdsAtEnd = openFds(server.pid);
for (let i = 0; i < 50 && fdsAtEnd > fdsAtStart; i++) {
  await new Promise((r) => setTimeout(r, 100));
  fdsAtEnd = openFds(server.pid);
}
await server.stop();

// Resident memory saws up and down with the collector (tens of MiB a minute here), so one sample
// against another says little: the lowest sample (after a collection) of the first third after
// warm-up is compared with the lowest of the last third. A leak raises that floor.
const third = (DURATION_S * 1000 - WARM_UP_MS) / 3;
const floor = (from: number, to: number) =>
  Math.min(...rssSamples.filter(([t]) => t >= from && t <= to).map(([, mib]) => mib));
const floorEarly = floor(WARM_UP_MS, WARM_UP_MS + third);
const floorLate = floor(DURATION_S * 1000 - third, DURATION_S * 1000);
const growth = ((floorLate - floorEarly) / floorEarly) * 100;
const bad = [...unexpected.values()].reduce((a, b) => a + b, 0);
process.stdout.write(
  [
    `answers: ${answered} in ${DURATION_S} s; ${[...counts]
      .sort()
      .map(([k, v]) => `${k}×${v}`)
      .join(", ")}`,
    `unexpected: ${bad === 0 ? "none" : [...unexpected].map(([k, v]) => `${k}×${v}`).join(", ")}`,
    `memory: rss at start ${rssAtStart} MiB, after warm-up (${WARM_UP_MS / 1000} s) ${rssAfterWarmUp} MiB, at the end ${rssAtEnd} MiB, peak ${Math.max(...rssSamples.map(([, m]) => m))} MiB`,
    `memory floor (lowest rss): first third after warm-up ${floorEarly} MiB, last third ${floorLate} MiB (${growth >= 0 ? "+" : ""}${growth.toFixed(1)} %; limit +10 %)`,
    `descriptors: at start ${fdsAtStart}, at the end ${fdsAtEnd}`,
    "",
  ].join("\n"),
);
process.exitCode = bad > 0 || !(growth <= 10) || fdsAtEnd > fdsAtStart ? 1 : 0;
