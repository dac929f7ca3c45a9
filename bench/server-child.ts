/**
 * A `partner-yield serve` child process for the abuse benchmarks (flood, soak): started from
 * source on 127.0.0.1 with a free port, its open descriptors and resident memory read from /proc.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_SERVER_ENV } from "./built-cli.js";

export interface ServerChild {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM, then SIGKILL after 15 s) and resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `serve --port 0 --log none` plus `flags`, from `repo` (default this checkout), and waits
 * for its banner. With `fdLimit`, the server runs under `ulimit -n fdLimit` (at most this
 * process's own limit).
 */
export async function startServerChild(
  flags: readonly string[],
  repo?: string,
  fdLimit?: number,
): Promise<ServerChild> {
  const root = repo ?? fileURLToPath(new URL("../", import.meta.url));
  // A checkout from before @partner-yield/server has the CLI in the node adapter.
  const cli = ["packages/server/src/cli.ts", "packages/node-adapter/src/cli.ts"]
    .map((path) => join(root, path))
    .find((path) => existsSync(path))!;
  const args = [
    "--conditions=@partner-yield/source",
    "--import",
    "tsx",
    cli,
    "serve",
    "--port",
    "0",
    "--log",
    "none",
    ...flags,
  ];
  const env = { ...process.env, ...BENCH_SERVER_ENV, NODE_OPTIONS: "" };
  const child =
    fdLimit === undefined
      ? spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], env })
      : spawn("/bin/sh", ["-c", `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...args], {
          cwd: root,
          stdio: ["ignore", "pipe", "pipe"],
          env,
        });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => {
    if (err.length < 10_000) err += d.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s: ${err}`)), 60_000);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${err}`));
    });
  });
  child.stdout!.resume();
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return {
    child,
    pid: child.pid!,
    port,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Open file descriptors of `pid` (Linux /proc), or -1 where it cannot be read. */
export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
}

/** Resident memory of `pid` in MiB (Linux /proc), or -1 where it cannot be read. */
export function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "NaN");
    return Number.isFinite(kb) ? Math.round((kb / 1024) * 10) / 10 : -1;
  } catch {
    return -1;
  }
}

/** The value at `q` (0–1) of sorted `values`, or NaN when empty. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
