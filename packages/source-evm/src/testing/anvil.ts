/**
 * A local `anvil` node for tests and demos, from the `@foundry-rs/anvil` npm package: the binary
 * ships in its platform package (`@foundry-rs/anvil-linux-amd64`, …), so nothing is downloaded at
 * run time. Install `@foundry-rs/anvil` as a dev dependency to use this module.
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";

const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  "linux-x64": "linux-amd64",
  "linux-arm64": "linux-arm64",
  "darwin-x64": "darwin-amd64",
  "darwin-arm64": "darwin-arm64",
  "win32-x64": "win32-amd64",
};

/**
 * Path of the anvil binary installed with `@foundry-rs/anvil` (its platform package).
 * @throws Error naming the package to install when it is missing or the platform is not served.
 * @example spawnSync(anvilBinaryPath(), ["--version"]);
 */
export function anvilBinaryPath(): string {
  const platform = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (platform === undefined)
    throw new Error(`@foundry-rs/anvil ships no binary for ${process.platform}-${process.arch}`);
  const require = createRequire(import.meta.url);
  let wrapper: string;
  try {
    wrapper = require.resolve("@foundry-rs/anvil/package.json");
  } catch {
    throw new Error("anvil is not installed: add the dev dependency @foundry-rs/anvil");
  }
  const binary = `@foundry-rs/anvil-${platform}/bin/anvil${process.platform === "win32" ? ".exe" : ""}`;
  try {
    return createRequire(wrapper).resolve(binary);
  } catch {
    throw new Error(`${binary} is missing: reinstall @foundry-rs/anvil (optional dependencies enabled)`);
  }
}

export interface AnvilOptions {
  /** Chain id the node reports; default 31337. Use 8453 to stand in for Base. */
  readonly chainId?: number;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** File to load the chain from at start and dump it to on a graceful stop (SIGTERM). */
  readonly stateFile?: string;
  /** Extra command-line arguments. */
  readonly args?: readonly string[];
  /** How long to wait for "Listening on"; default 30 s (a loaded machine starts slowly). */
  readonly startTimeoutMs?: number;
}

export interface AnvilNode {
  /** `http://127.0.0.1:<port>`. */
  readonly rpcUrl: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** Stops the node (SIGTERM, then SIGKILL after 5 s) and resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts anvil and resolves once it listens.
 * @example
 * const node = await startAnvil({ chainId: 8453 });
 * // … createPublicClient({ transport: http(node.rpcUrl) }) …
 * await node.stop();
 */
export function startAnvil(options: AnvilOptions = {}): Promise<AnvilNode> {
  const host = options.host ?? "127.0.0.1";
  const args = [
    "--host",
    host,
    "--port",
    String(options.port ?? 0),
    "--chain-id",
    String(options.chainId ?? 31337),
    ...(options.stateFile === undefined
      ? []
      : ["--state", options.stateFile, "--preserve-historical-states"]),
    ...(options.args ?? []),
  ];
  const child = spawn(anvilBinaryPath(), args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  return new Promise<AnvilNode>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`anvil did not start within ${options.startTimeoutMs ?? 30_000} ms:\n${output}`));
    }, options.startTimeoutMs ?? 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /Listening on ([^\s]+):(\d+)/.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      // Keep draining: a full pipe would block the node.
      child.stdout!.resume();
      const port = Number(match[2]);
      resolve({ rpcUrl: `http://${host}:${port}`, port, process: child, stop });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited (${signal ?? code}) before listening:\n${output}`));
    });
  });
}
