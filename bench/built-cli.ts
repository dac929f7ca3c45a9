/**
 * The `partner-yield` command as a user runs it: the built `dist/` (brought up to date here with an
 * incremental `tsc -b`), started with plain `node` and without the runner's NODE_OPTIONS (whose
 * source condition would load TypeScript). Shared by `bench:http` and `bench:propagation`, which
 * prepare their databases with it (`db migrate`, `db import-fixtures fixtures/`) as an operator
 * would.
 * @module
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * The CLI's entry point in a checkout (`root`, default this one): runs `dist/cli.js`.
 * @example spawn(process.execPath, [cliBin(), "serve", "--port", "8080"], { env: builtEnv() });
 */
export function cliBin(root: string = ROOT): string {
  // A checkout from before @partner-yield/server has the bin in the node adapter.
  const before = join(root, "packages/node-adapter/bin/partner-yield.js");
  const bin = join(root, "packages/server/bin/partner-yield.js");
  return existsSync(bin) || !existsSync(before) ? bin : before;
}

/**
 * Brings the built CLI (the server package and the packages it references) up to date: `tsc -b`, which
 * does nothing when `dist/` is current.
 * @example buildCli(); // then spawn(process.execPath, [cliBin(), "serve", …])
 */
export function buildCli(): void {
  execFileSync(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-b", "packages/server/tsconfig.build.json"],
    { cwd: ROOT, stdio: "inherit" },
  );
}

/**
 * What every benchmark's server gets in its environment: no drain delay (`serve --drain-delay`,
 * 5 s by default, keeps a stopping server accepting for a load balancer to notice; a benchmark
 * stops its servers at once).
 */
export const BENCH_SERVER_ENV: Readonly<Record<string, string>> = { PARTNER_YIELD_DRAIN_DELAY_MS: "0" };

/**
 * The environment for a child running the built code: this process's, without NODE_OPTIONS, with
 * `BENCH_SERVER_ENV`.
 * @example spawn(process.execPath, [cliBin(), "serve"], { env: builtEnv() });
 */
export function builtEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _dropped, ...rest } = process.env;
  return { ...rest, ...BENCH_SERVER_ENV, ...extra };
}

/** A `partner-yield` command of the built CLI failed (non-zero exit, or killed at its time limit). */
export class BuiltCliError extends Error {
  readonly code = "built_cli_failed";
  constructor(args: readonly string[], detail: string) {
    super(`partner-yield ${args.join(" ")} failed: ${detail}`);
    this.name = "BuiltCliError";
  }
}

/**
 * Runs one command of the built CLI (at most `timeoutMs`) and resolves with its stdout.
 * @throws BuiltCliError when it exits non-zero.
 * @example await runBuiltCli(["db", "migrate", "--database-url", url]);
 */
export function runBuiltCli(args: readonly string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cliBin(), ...args],
      { cwd: ROOT, env: builtEnv(), timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout);
        else
          reject(new BuiltCliError(args, `${error.code ?? error.signal}: ${stderr.trim() || stdout.trim()}`));
      },
    );
  });
}

/**
 * Migrates the database at `url` and imports the repository's fixtures into it, with the built
 * CLI's `db migrate` and `db import-fixtures fixtures/`.
 * @example await migrateAndImportFixtures(database.url);
 */
export async function migrateAndImportFixtures(url: string): Promise<void> {
  await runBuiltCli(["db", "migrate", "--database-url", url]);
  await runBuiltCli(["db", "import-fixtures", join(ROOT, "fixtures"), "--database-url", url]);
}
