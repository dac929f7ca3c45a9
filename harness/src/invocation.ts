/**
 * How the user started the CLI, so every command it prints (the rerun line, a property's replay)
 * runs as printed: `pnpm conformance …` from a checkout (or `npx -y pnpm@10 conformance …` where
 * pnpm is not on the PATH), `npx partner-yield-conformance …` from a project that installed the
 * package, `partner-yield-conformance …` when it is on the PATH, `node path/to/bin … ` otherwise.
 * @module
 */
import { existsSync } from "node:fs";
import { basename, delimiter, join, relative } from "node:path";

export const BIN = "partner-yield-conformance";

/** The command prefixes that start `run`/`list` and `properties` the way this process was started. */
export interface Invocation {
  /** Followed by `run …` or `list …`. */
  readonly conformance: string;
  /** Followed by the properties' options. */
  readonly properties: string;
}

/**
 * True when `command` is on the user's own PATH. Package managers put their project bins and npx's
 * cache on the PATH of a script, which the user's shell does not have: those do not count.
 */
function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return (env["PATH"] ?? "")
    .split(delimiter)
    .filter(
      (dir) => dir !== "" && !dir.split(/[\\/]/).some((part) => part === "node_modules" || part === "_npx"),
    )
    .some((dir) => existsSync(join(dir, command)) || existsSync(join(dir, `${command}.cmd`)));
}

/** pnpm as the user can start it again: itself, or through npx when npx fetched it. */
function pnpmCommand(env: NodeJS.ProcessEnv): string {
  const fetched = (env["npm_execpath"] ?? "").split(/[\\/]/).includes("_npx");
  return !fetched && onPath("pnpm", env) ? "pnpm" : "npx -y pnpm@10";
}

/**
 * @example invocationOf({ npm_lifecycle_event: "conformance", npm_config_user_agent: "pnpm/10.3.0 …" }, "…/cli.ts", "/repo")
 * // { conformance: "pnpm conformance", properties: "pnpm conformance properties" } (pnpm on the PATH)
 */
export function invocationOf(env: NodeJS.ProcessEnv, script: string | undefined, cwd: string): Invocation {
  const event = env["npm_lifecycle_event"];
  if (
    (event === "conformance" || event === "properties") &&
    (env["npm_config_user_agent"] ?? "").startsWith("pnpm/")
  ) {
    const pnpm = pnpmCommand(env);
    return {
      conformance: `${pnpm} conformance`,
      properties: event === "properties" ? `${pnpm} properties` : `${pnpm} conformance properties`,
    };
  }
  let prefix: string;
  if (script?.split(/[\\/]/).includes("node_modules")) {
    // Installed in a project (npm's .bin symlink, or pnpm's shim calling the package's bin).
    prefix = `npx ${BIN}`;
  } else if (script !== undefined && basename(script) === BIN) {
    prefix = onPath(BIN, env) ? BIN : script;
  } else if (script?.endsWith(".js")) {
    prefix = `node ${relative(cwd, script) || script}`;
  } else if (script?.endsWith(".ts")) {
    prefix = `NODE_OPTIONS=--conditions=@partner-yield/source npx tsx ${relative(cwd, script) || script}`;
  } else prefix = BIN;
  return { conformance: prefix, properties: `${prefix} properties` };
}
