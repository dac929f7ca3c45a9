/** Test support for the repository-level tests: the workspace root, pnpm, and child processes. */
import { type ChildProcess, execFile, execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

let pnpm: string | undefined;

/**
 * The pnpm entry point to run with `node`: the one running `pnpm test`, else the one `npx -y pnpm@10`
 * installs (as the README's commands do).
 */
export function pnpmEntry(): string {
  if (pnpm !== undefined) return pnpm;
  const running = process.env["npm_execpath"];
  if (running !== undefined && /pnpm/.test(running)) {
    pnpm = running;
  } else {
    const bin = execFileSync("npx", ["-y", "-p", "pnpm@10", "sh", "-c", "command -v pnpm"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    pnpm = realpathSync(bin);
  }
  return pnpm;
}

/** Collects a stream's text and resolves when `pattern` first matches it (rejects when the process exits first). */
export function waitForOutput(child: ChildProcess, stream: "stdout" | "stderr", pattern: RegExp) {
  let text = "";
  const output = child[stream]!;
  output.setEncoding("utf8");
  const matched = new Promise<RegExpExecArray>((resolve, reject) => {
    const onData = (chunk: string) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match !== null) {
        output.off("data", onData);
        child.off("exit", onExit);
        resolve(match);
      }
    };
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`exited (${code ?? signal}) before ${pattern} appeared on ${stream}:\n${text}`));
    output.on("data", onData);
    child.once("exit", onExit);
  });
  return { matched, text: () => text };
}

/** Resolves with the exit code and signal of `child` (at once if it already exited). */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/**
 * Runs a bench script of the repository from source (tsx) with `args`, at most `timeoutMs`;
 * resolves with its exit code and output. `env` is added to this process's environment.
 */
export function runBench(
  script: string,
  args: string[],
  timeoutMs = 90_000,
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--conditions=@partner-yield/source", "--import", "tsx", script, ...args],
      {
        cwd: ROOT,
        timeout: timeoutMs,
        maxBuffer: 4 * 1024 * 1024,
        env: { ...process.env, NODE_OPTIONS: "", ...env },
      },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number | null), stdout, stderr }),
    );
  });
}
