/**
 * Finding a command-line tool a benchmark runs beside our servers (pgbench, redis-benchmark).
 * @module
 */
import { execFileSync } from "node:child_process";

/**
 * The tool to run: the path in the environment variable `envName`, else `name` on PATH, when it
 * answers `--version`; undefined otherwise.
 * @example const bin = findTool("PGBENCH", "pgbench") ?? fail(PGBENCH_INSTALL_HINT);
 */
export function findTool(envName: string, name: string): string | undefined {
  const bin = process.env[envName] ?? name;
  try {
    execFileSync(bin, ["--version"], { stdio: "ignore", timeout: 10_000 });
    return bin;
  } catch {
    return undefined;
  }
}
