/**
 * Reads the four fixture files from a directory and validates them with the core. Every failure
 * (missing file, JSON syntax error, a field that does not validate) is a `FixtureError` naming
 * the file, and the field where there is one.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  FIXTURE_FILES,
  FixtureError,
  type FixtureFileName,
  loadFixtures,
  type SandboxData,
} from "@partner-yield/core";
import { withDemoProductionKey } from "@partner-yield/core/demo";

/** The package's own copy of the sandbox fixtures: a packed package carries one (`prepack` makes it). */
const PACKED_FIXTURES_DIR = fileURLToPath(new URL("../fixtures/", import.meta.url));
/** The repository's `fixtures/`, from a checkout. */
const CHECKOUT_FIXTURES_DIR = fileURLToPath(new URL("../../../fixtures/", import.meta.url));

/**
 * The sandbox fixtures, resolved from this file (src/ or dist/), not the cwd: the package's own
 * `fixtures/` when it has them (installed from its tarball), else the repository's (a checkout).
 * @example loadFixtureDir(DEFAULT_FIXTURES_DIR);
 */
export const DEFAULT_FIXTURES_DIR: string =
  existsSync(PACKED_FIXTURES_DIR) || !existsSync(CHECKOUT_FIXTURES_DIR)
    ? PACKED_FIXTURES_DIR
    : CHECKOUT_FIXTURES_DIR;

/**
 * The parsed contents of the four fixture files in `dir`.
 * @example const files = readFixtureDir("./fixtures"); // { "partners.json": [...], … }
 */
export function readFixtureDir(dir: string): Record<FixtureFileName, unknown> {
  const files = {} as Record<FixtureFileName, unknown>;
  for (const name of FIXTURE_FILES) {
    const file = join(dir, name);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new FixtureError(
        file,
        "",
        code === "ENOENT" ? "file not found" : `cannot read the file (${code ?? String(error)})`,
      );
    }
    try {
      files[name] = JSON.parse(text);
    } catch (error) {
      throw new FixtureError(file, "", `invalid JSON: ${(error as Error).message}`);
    }
  }
  return files;
}

/**
 * Reads and validates the fixtures in `dir` and builds the in-memory stores. The demo fixtures get
 * the demo production key's record (`withDemoProductionKey`), which the files do not hold.
 * @example const data = loadFixtureDir(DEFAULT_FIXTURES_DIR); data.productRecords.length;
 */
export function loadFixtureDir(dir: string, options: { requirePrices?: boolean } = {}): SandboxData {
  return loadFixtures(withDemoProductionKey(readFixtureDir(dir)), {
    dir,
    requirePrices: options.requirePrices,
  });
}
