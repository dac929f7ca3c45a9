/**
 * Redis's own yardsticks for the rate limiter's decisions, measured with `redis-benchmark` on the
 * same machine and the same Redis: the limiter's script (`RATE_LIMIT_MANY_SCRIPT`, loaded once and
 * run by `EVALSHA`, one hit a call) and `INCR`, each call its own round trip from one of 50
 * clients. What the limiter's decisions/s are set against in `bench:stores` (issue 28: one round
 * trip per decision at most, measured against redis-benchmark).
 * @module
 */
import { execFile } from "node:child_process";
import { findTool } from "./find-tool.js";

/** What to install where redis-benchmark is missing. */
export const REDIS_BENCHMARK_INSTALL_HINT =
  "redis-benchmark comes with Redis: on Debian/Ubuntu `apt-get install redis-tools`, on Alpine " +
  "`apk add redis`, on macOS `brew install redis`; or put one on PATH " +
  "(REDIS_BENCHMARK=/path/to/redis-benchmark)";

/** redis-benchmark ran but failed (exit status, or output this code cannot read). */
export class RedisBenchmarkError extends Error {
  readonly code = "redis_benchmark_failed";
  constructor(detail: string) {
    super(`redis-benchmark failed: ${detail}`);
    this.name = "RedisBenchmarkError";
  }
}

/**
 * The redis-benchmark to run (`REDIS_BENCHMARK`, else `redis-benchmark` on PATH) when it answers
 * `--version`; undefined otherwise.
 * @example const bin = findRedisBenchmark() ?? fail(REDIS_BENCHMARK_INSTALL_HINT);
 */
export function findRedisBenchmark(): string | undefined {
  return findTool("REDIS_BENCHMARK", "redis-benchmark");
}

/**
 * redis-benchmark's connection flags for a `redis://[user:password@]host:port[/db]` URL.
 * @throws RedisBenchmarkError for a `rediss://` URL (the yardstick runs on plain TCP) or another scheme.
 */
export function connectionArgs(url: string): string[] {
  const parsed = new URL(url);
  if (parsed.protocol !== "redis:")
    throw new RedisBenchmarkError(
      `the yardstick needs a redis:// URL (plain TCP on the same machine), not ${parsed.protocol}//`,
    );
  const args = ["-h", parsed.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1", "-p", parsed.port || "6379"];
  if (parsed.username !== "") args.push("--user", decodeURIComponent(parsed.username));
  if (parsed.password !== "") args.push("-a", decodeURIComponent(parsed.password), "--no-auth-warning");
  const db = parsed.pathname.replace(/^\//, "");
  if (db !== "") args.push("--dbnum", db);
  return args;
}

/** One redis-benchmark run's figures. */
export interface RedisBenchmarkResult {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/**
 * Reads the last data line of `redis-benchmark --csv`
 * (`"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",…,"p99_latency_ms",…`).
 * @throws RedisBenchmarkError when the output holds no such line.
 */
export function parseCsv(output: string): RedisBenchmarkResult {
  const lines = output.trim().split("\n");
  const header = lines[0]?.split(",").map((cell) => cell.replace(/"/g, ""));
  const row = lines
    .at(-1)
    ?.split('","')
    .map((cell) => cell.replace(/"/g, ""));
  const at = (name: string) => Number(row?.[header?.indexOf(name) ?? -1]);
  const result = { perSecond: at("rps"), p50Ms: at("p50_latency_ms"), p99Ms: at("p99_latency_ms") };
  if (lines.length < 2 || !Object.values(result).every(Number.isFinite))
    throw new RedisBenchmarkError(`cannot read its --csv output: ${JSON.stringify(output.slice(0, 300))}`);
  return result;
}

/**
 * Runs `command` (a Redis command and its arguments) `requests` times from `clients` connections,
 * no pipelining: each call its own round trip. With `keyspace`, every `__rand_int__` in the
 * arguments becomes a number below it, drawn anew for each placeholder of each call.
 * @example await runRedisBenchmark(bin, url, { clients: 50, requests: 100_000, command: ["INCR", "k"] })
 */
export function runRedisBenchmark(
  bin: string,
  url: string,
  options: { clients: number; requests: number; keyspace?: number; command: readonly string[] },
): Promise<RedisBenchmarkResult> {
  const args = [
    ...connectionArgs(url),
    "-c",
    String(options.clients),
    "-n",
    String(options.requests),
    ...(options.keyspace === undefined ? [] : ["-r", String(options.keyspace)]),
    "--csv",
    ...options.command,
  ];
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: 300_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error !== null) {
        const said = `${stderr}\n${stdout}`.replace(/^"test".*$/m, "").trim();
        reject(new RedisBenchmarkError(`${error.message.split("\n")[0]}: ${said.slice(0, 300)}`));
        return;
      }
      try {
        resolve(parseCsv(stdout));
      } catch (parseError) {
        reject(parseError);
      }
    });
  });
}
