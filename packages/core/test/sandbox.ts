/** Test support: the repo's sandbox fixtures and demo credentials, loaded once. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEMO_CREDENTIALS } from "../../node-adapter/src/demo.js";
import { FIXTURE_FILES, type FixtureFileName, loadFixtures, type SandboxData } from "../src/index.js";

export const FIXTURES_DIR = fileURLToPath(new URL("../../../fixtures/", import.meta.url));
export const DEMO = DEMO_CREDENTIALS;

export function readFixtureFiles(): Record<FixtureFileName, unknown> {
  return Object.fromEntries(
    FIXTURE_FILES.map((file) => [file, JSON.parse(readFileSync(FIXTURES_DIR + file, "utf8"))]),
  ) as Record<FixtureFileName, unknown>;
}

/** Fresh in-memory stores filled from the fixtures. */
export function loadSandbox(): SandboxData {
  return loadFixtures(readFixtureFiles(), { dir: "fixtures" });
}
