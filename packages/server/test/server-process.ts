/**
 * Test support: `partner-yield serve` as a separate process (the built command or the source:
 * cli-command.ts), as an operator runs it — started, read from its banner, and stopped with any
 * signal (SIGKILL for the crash test).
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { SCRIPT_END } from "../src/banner.js";
import { cliArgs, cliEnv } from "./cli-command.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  readonly banner: string;
  /** Sends `signal` and resolves with the exit code (null when killed by a signal). */
  stop(signal: NodeJS.Signals): Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

/** The key children encrypt signing secrets with (PARTNER_YIELD_SECRET_KEYS; a test value, 32 bytes). */
export const TEST_SECRET_KEYS = `test:${Buffer.alloc(32, 7).toString("base64")}`;

/** The environment of the child: this one without settings that would change the server. */
function childEnv(): NodeJS.ProcessEnv {
  return cliEnv({
    // A production server on PostgreSQL refuses to start without a key for the signing secrets at
    // rest: the children get a test key (a test unsets it with PARTNER_YIELD_SECRET_KEYS: "").
    PARTNER_YIELD_SECRET_KEYS: TEST_SECRET_KEYS,
    // The banner is read for the URL; without a terminal, production prints it only when asked.
    PARTNER_YIELD_BANNER: "on",
  });
}

/** Runs `partner-yield ARGS` to its end, with `env` added to its environment. */
export async function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, cliArgs(args), {
    cwd: REPO,
    env: { ...childEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, stderr };
}

/**
 * `partner-yield serve --port 0 --log none --drain-delay 0 ARGS`, once its banner is complete (at
 * most 30 s). No drain delay unless ARGS give one (a later flag wins): no balancer polls a test's server.
 */
export async function startServerProcess(args: readonly string[]): Promise<ServerProcess> {
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(
    process.execPath,
    cliArgs(["serve", "--port", "0", "--log", "none", "--drain-delay", "0", ...args]),
    { cwd: REPO, env: childEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const deadline = Date.now() + 30_000;
  while (!stdout.includes(SCRIPT_END)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the server did not start:\n${stdout}\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const url = /serving \w+ at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
  if (url === undefined) throw new Error(`no URL in the banner:\n${stdout}`);
  return {
    url,
    pid: child.pid!,
    banner: stdout,
    stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    output: () => ({ stdout, stderr }),
  };
}
