/**
 * Test support: how a test starts `partner-yield` as a child process.
 *
 * - `PARTNER_YIELD_TEST_CLI=dist` (what `pnpm test` sets, right after its `tsc -b` brought the
 *   packages' `dist/` up to date): the built command, `node packages/server/bin/partner-yield.js`,
 *   as `npm i -g` installs it, without the source condition.
 * - unset (a test file run on its own with tsx): the source, `node --import tsx src/cli.ts` with the
 *   source condition, as `pnpm serve` runs it; no build needed.
 *
 * The two run the same code; the built one starts in about a third of the time (tsx compiles and
 * resolves every module of the CLI through its loader thread on each start), and the server tests
 * start the CLI more than 130 times.
 * @module
 */
import { fileURLToPath } from "node:url";

const SOURCE = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const BUILT = fileURLToPath(new URL("../bin/partner-yield.js", import.meta.url));

function fromDist(): boolean {
  const chosen = process.env["PARTNER_YIELD_TEST_CLI"];
  if (chosen === undefined || chosen === "" || chosen === "source") return false;
  if (chosen === "dist") return true;
  throw new Error(`PARTNER_YIELD_TEST_CLI must be "dist" or "source" (got ${JSON.stringify(chosen)})`);
}

/** True when the tests run the built CLI (PARTNER_YIELD_TEST_CLI=dist). */
export const CLI_FROM_DIST = fromDist();

/**
 * The arguments to `node` that run `partner-yield ARGS`.
 * @example spawn(process.execPath, cliArgs(["keys", "list"]), { env: cliEnv() });
 */
export function cliArgs(args: readonly string[]): string[] {
  return CLI_FROM_DIST ? [BUILT, ...args] : ["--import", "tsx", SOURCE, ...args];
}

/** The child's NODE_OPTIONS: the source condition for tsx; nothing for the built command. */
const CLI_NODE_OPTIONS = CLI_FROM_DIST ? "" : "--conditions=@partner-yield/source";

/** partner-yield's own settings in an environment: PORT, DATABASE_URL, REDIS_URL, PARTNER_YIELD_*. */
function isSetting(name: string): boolean {
  return (
    name === "PORT" || name === "DATABASE_URL" || name === "REDIS_URL" || name.startsWith("PARTNER_YIELD_")
  );
}

/**
 * The environment of a `partner-yield` child: this process's, without partner-yield's settings (a
 * developer's own PORT or DATABASE_URL must not leak into a test's server), with CLI_NODE_OPTIONS,
 * then `extra` (settings included).
 * @example spawn(process.execPath, cliArgs(["serve"]), { env: cliEnv({ PARTNER_YIELD_BANNER: "on" }) });
 */
export function cliEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!isSetting(name)) env[name] = value;
  return { ...env, NODE_OPTIONS: CLI_NODE_OPTIONS, ...extra };
}
