/**
 * wrk (Debian's `wrk`, a load generator written in C) as `bench:http`'s load generator instead of
 * autocannon (`--loader wrk`). pgbench, the POST's yardstick, drives PostgreSQL from a C client; on
 * a 2-core machine autocannon's client in JavaScript takes a large share of the cores the server
 * needs (docs/performance.md, "The POST's load generator"), so the POST against pgbench is also
 * measured with a client as light as pgbench's. Each run writes a Lua script that sends the
 * request (for a POST, a new Idempotency-Key each time: the run's tag, the wrk thread, a counter)
 * and prints wrk's own figures as one JSON line from its `done` hook.
 * @module
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What to install where wrk is missing. */
export const WRK_INSTALL_HINT =
  "wrk is a Debian/Ubuntu package (`apt-get install wrk`), on Alpine `apk add wrk`, on macOS " +
  "`brew install wrk`; or put a wrk on PATH (WRK=/path/to/wrk)";

/** wrk ran but failed (exit status, or output this code cannot read). */
export class WrkError extends Error {
  readonly code = "wrk_failed";
  constructor(detail: string) {
    super(`wrk failed: ${detail}`);
    this.name = "WrkError";
  }
}

/**
 * The wrk to run (`WRK`, else `wrk` on PATH) when its `--version` names wrk (it exits 1 after
 * printing it); undefined otherwise.
 * @example const bin = findWrk() ?? fail(WRK_INSTALL_HINT);
 */
export function findWrk(): string | undefined {
  const bin = process.env["WRK"] ?? "wrk";
  return wrkVersion(bin) === undefined ? undefined : bin;
}

/** `wrkVersion`'s answers by binary: `findWrk` and the table's header ask once between them. */
const versions = new Map<string, string | undefined>();

/**
 * The version `bin --version` names when it is wrk (e.g. "debian/4.1.0-3+b2"); undefined when it
 * cannot be run or is not wrk. Asked once a process for each `bin`.
 */
export function wrkVersion(bin: string): string | undefined {
  if (!versions.has(bin)) {
    const r = spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 10_000 });
    versions.set(bin, r.error === undefined ? /^wrk (\S+)/m.exec(`${r.stdout}${r.stderr}`)?.[1] : undefined);
  }
  return versions.get(bin);
}

/** The request wrk sends. */
export interface WrkRequest {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  /** A header given a new value on every request (`<tag>-<thread>-<n>`), e.g. "idempotency-key". */
  readonly freshHeader?: string | undefined;
}

/** One wrk run's figures. */
export interface WrkResult {
  /** Responses read (any status). */
  readonly total: number;
  /** The run's length as wrk timed it, seconds. */
  readonly seconds: number;
  /** Percentiles of wrk's latency histogram, ms. */
  readonly p50: number;
  readonly p99: number;
  /** Answers with a status of 400 or more, and socket errors and timeouts. */
  readonly bad: number;
}

/**
 * `s` as a Lua string literal: printable ASCII as is (but `"` and `\`), every other byte of its
 * UTF-8 as a decimal escape, so any header value or body reaches the wire byte for byte.
 */
export function luaString(s: string): string {
  let out = '"';
  for (const byte of Buffer.from(s, "utf8")) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\${byte.toString().padStart(3, "0")}`;
  }
  return `${out}"`;
}

/** The marker of the JSON line the script's `done` prints. */
const RESULT_MARK = "PARTNER_YIELD_WRK ";

/**
 * The Lua script of one request shape. Without `freshHeader` wrk builds the request once per
 * connection's thread (its fastest way); with it, `request()` formats each one.
 */
export function wrkScript(request: WrkRequest): string {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `  [${luaString(name)}] = ${luaString(value)},`)
    .join("\n");
  const lines = [
    `wrk.method = ${luaString(request.method)}`,
    `wrk.path = ${luaString(request.path)}`,
    `wrk.headers = {\n${headers}\n}`,
    ...(request.body === undefined ? [] : [`wrk.body = ${luaString(request.body)}`]),
  ];
  if (request.freshHeader !== undefined) {
    lines.push(
      "local threads = 0",
      "function setup(thread)",
      "  threads = threads + 1",
      '  thread:set("thread_number", threads)',
      "end",
      "local prefix = nil",
      "local n = 0",
      "function init(args)",
      '  prefix = args[1] .. "-" .. thread_number .. "-"',
      "end",
      "function request()",
      "  n = n + 1",
      `  wrk.headers[${luaString(request.freshHeader)}] = prefix .. n`,
      "  return wrk.format()",
      "end",
    );
  }
  lines.push(
    "function done(summary, latency, requests)",
    "  local e = summary.errors",
    `  io.write(string.format(${luaString(RESULT_MARK)} .. '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\\n',`,
    "    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),",
    "    e.status, e.connect, e.read, e.write, e.timeout))",
    "end",
  );
  return `${lines.join("\n")}\n`;
}

/**
 * wrk's threads for `connections` on `cores`: the most, at most `cores`, that divide the
 * connections evenly (wrk opens connections / threads on each, rounded down).
 * @example threadsFor(50, 2) // 2; threadsFor(5, 2) // 1
 */
export function threadsFor(connections: number, cores: number): number {
  let threads = Math.max(1, Math.min(cores, connections));
  while (connections % threads !== 0) threads--;
  return threads;
}

/**
 * Loads `http://127.0.0.1:<port>` with `request` for `seconds` over `connections` connections on
 * `threads` threads (see `threadsFor`). `tag` makes the fresh header's values unique: give each
 * run its own.
 * @throws WrkError when wrk exits non-zero or prints no result line.
 * @example const r = await runWrk("wrk", 8787, { method: "GET", path: "/healthz", headers: {} }, 50, 2, 6, "r1");
 */
export async function runWrk(
  bin: string,
  port: number,
  request: WrkRequest,
  connections: number,
  threads: number,
  seconds: number,
  tag: string,
): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), "py-wrk-"));
  try {
    const script = join(dir, "request.lua");
    writeFileSync(script, wrkScript(request));
    const args = [
      `--connections=${connections}`,
      `--threads=${threads}`,
      `--duration=${seconds}s`,
      `--script=${script}`,
      `http://127.0.0.1:${port}${request.path}`,
      "--",
      tag,
    ];
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        bin,
        args,
        { timeout: (seconds + 30) * 1000, maxBuffer: 4 * 1024 * 1024 },
        (error, out, err) => {
          if (error === null) resolve(out);
          else reject(new WrkError(`${error.code ?? error.signal}: ${err.trim() || out.trim()}`));
        },
      );
    });
    return parseResult(stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures of the script's result line in wrk's output. */
export function parseResult(stdout: string): WrkResult {
  const line = stdout.split("\n").find((l) => l.startsWith(RESULT_MARK));
  if (line === undefined) throw new WrkError(`no result line in its output:\n${stdout}`);
  const r = JSON.parse(line.slice(RESULT_MARK.length)) as Record<string, number>;
  const seconds = r["duration_us"]! / 1e6;
  if (!(seconds > 0)) throw new WrkError(`a run of ${r["duration_us"]} µs:\n${stdout}`);
  return {
    total: r["requests"]!,
    seconds,
    p50: r["p50_us"]! / 1000,
    p99: r["p99_us"]! / 1000,
    bad: r["status"]! + r["connect"]! + r["read"]! + r["write"]! + r["timeout"]!,
  };
}

/**
 * The CPU this process's waited-for children have used, µs (`cutime` + `cstime` of
 * /proc/self/stat): a finished wrk's time is in it. NaN off Linux.
 */
export function childrenCpuMicros(ticksPerSecond: number): number {
  let stat: string;
  try {
    stat = readFileSync("/proc/self/stat", "utf8");
  } catch {
    return Number.NaN;
  }
  return childrenCpuOf(stat, ticksPerSecond);
}

/** `cutime` + `cstime` of a /proc/PID/stat line, µs; NaN when the line does not hold them. */
export function childrenCpuOf(stat: string, ticksPerSecond: number): number {
  // The fields after the command's closing parenthesis (the command may hold one): state is
  // field 3, cutime 16, cstime 17.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields.length <= 14) return Number.NaN;
  return ((Number(fields[13]) + Number(fields[14])) * 1_000_000) / ticksPerSecond;
}
