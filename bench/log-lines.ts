/**
 * `tsx bench/log-lines.ts --pino DIR > /dev/null`: the cost of one request log line, ours
 * (request-log.ts: `requestLine` into the buffer written every 10 ms or 64 KiB) against pino
 * writing the same fields in the same order (level as its label, ISO time, the instance as its
 * base), both to stdout, in alternating rounds; ns per line on stderr. pino is not a dependency of
 * the project: install it anywhere (`npm i --prefix /tmp/pino pino`) and pass that directory.
 * Results in docs/performance.md ("The request log: ours kept over pino").
 * @module
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import {
  flushRequestLog,
  type RequestLogEntry,
  resolveRequestLog,
  setLogInstance,
} from "../packages/node-adapter/src/request-log.js";

const LINES = 200_000;
const ROUNDS = 5;

const args = process.argv.slice(2);
const pinoDir = args[args.indexOf("--pino") + 1];
if (!args.includes("--pino") || pinoDir === undefined) {
  process.stderr.write(
    "usage: tsx bench/log-lines.ts --pino DIR > /dev/null  (DIR: where pino is installed)\n",
  );
  process.exit(2);
}
if (process.stdout.isTTY) {
  process.stderr.write("redirect stdout (> /dev/null): the lines go there\n");
  process.exit(2);
}
const require = createRequire(join(pinoDir, "package.json"));
type PinoLogger = Record<"info" | "warn" | "error", (fields: object, msg: string) => void> & {
  flush(cb?: () => void): void;
};
const pino = require("pino") as {
  (options: object, stream: object): PinoLogger;
  destination(options: object): object;
  stdTimeFunctions: { isoTime: () => string };
};

setLogInstance("bench-host-4242");
const statuses = [200, 200, 200, 200, 200, 200, 200, 401, 429, 503];

function entry(i: number): RequestLogEntry {
  const status = statuses[i % statuses.length]!;
  return {
    time: new Date().toISOString(),
    level: status >= 500 ? "error" : status >= 400 ? "warn" : "info",
    msg: "request",
    instance: "bench-host-4242",
    request_id: `req_0123456789ab${i.toString(36).padStart(6, "0")}`,
    method: "GET",
    path: "/api/partner/products/usdc-base-prime",
    route: "GET /products/{slug}",
    status,
    code: status === 200 ? undefined : status === 401 ? "invalid_api_key" : "rate_limited",
    partner_id: "acme",
    key_id: "12",
    client_address: "10.1.2.3",
    bytes_in: 0,
    bytes_out: 712,
    duration_ms: 0.4,
    aborted: undefined,
  };
}

function ours(): number {
  const log = resolveRequestLog("json")!;
  const start = process.hrtime.bigint();
  for (let i = 0; i < LINES; i++) log(entry(i));
  flushRequestLog();
  return Number(process.hrtime.bigint() - start) / LINES;
}

function pinoRun(sync: boolean): Promise<number> {
  const logger = pino(
    {
      base: { instance: "bench-host-4242" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label: string) => ({ level: label }) },
    },
    pino.destination({ dest: 1, sync, minLength: sync ? 0 : 4096 }),
  );
  const start = process.hrtime.bigint();
  for (let i = 0; i < LINES; i++) {
    const status = statuses[i % statuses.length]!;
    // The same fields as `entry`, less those pino adds itself (time, level, msg, instance).
    logger[status >= 500 ? "error" : status >= 400 ? "warn" : "info"](
      {
        request_id: `req_0123456789ab${i.toString(36).padStart(6, "0")}`,
        method: "GET",
        path: "/api/partner/products/usdc-base-prime",
        route: "GET /products/{slug}",
        status,
        code: status === 200 ? undefined : status === 401 ? "invalid_api_key" : "rate_limited",
        partner_id: "acme",
        key_id: "12",
        client_address: "10.1.2.3",
        bytes_in: 0,
        bytes_out: 712,
        duration_ms: 0.4,
      },
      "request",
    );
  }
  return new Promise((resolve) =>
    logger.flush(() => resolve(Number(process.hrtime.bigint() - start) / LINES)),
  );
}

const results: Record<string, number[]> = { ours: [], "pino (sync)": [], "pino (async, 4 KiB)": [] };
for (let round = 0; round < ROUNDS; round++) {
  results["ours"]!.push(ours());
  results["pino (sync)"]!.push(await pinoRun(true));
  results["pino (async, 4 KiB)"]!.push(await pinoRun(false));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
process.stderr.write(`${LINES} lines x ${ROUNDS} rounds, ns per line (median; min-max)\n`);
for (const [name, xs] of Object.entries(results)) {
  process.stderr.write(
    `${name.padEnd(22)} ${median(xs).toFixed(0).padStart(6)}  (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})\n`,
  );
}
