/** The sandbox as the tests use it: the demo fixtures, loaded into fresh in-memory stores. */
import type { SandboxData } from "@partner-yield/core";
import { DEFAULT_FIXTURES_DIR, loadFixtureDir } from "../fixture-dir.js";

/**
 * Fresh in-memory stores filled from the sandbox fixtures (`DEFAULT_FIXTURES_DIR`: the package's own
 * copy when installed, the repository's `fixtures/` in a checkout), with the demo production key.
 * @example const { keys, partners, products } = loadSandbox();
 */
export function loadSandbox(): SandboxData {
  return loadFixtureDir(DEFAULT_FIXTURES_DIR);
}
