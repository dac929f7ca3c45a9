/**
 * The demo data (`@partner-yield/core/demo`) as the fixture loader applies it: the fixture files
 * hold sandbox credentials only, and a sandbox on them adds the demo production key's record, so
 * that key answers 401 `wrong_environment` there.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { hashApiKey } from "@partner-yield/core";
import { DEMO_CREDENTIALS, DEMO_PRODUCTION_KEY_ROW, withDemoProductionKey } from "@partner-yield/core/demo";
import { privateFixtures } from "@partner-yield/node-adapter/testing";
import { DEFAULT_FIXTURES_DIR, loadFixtureDir, readFixtureDir } from "../src/index.js";

test("the fixture files hold no production key; the demo data adds the demo one for the sandbox", async () => {
  const raw = readFileSync(join(DEFAULT_FIXTURES_DIR, "partners.json"), "utf8");
  const partners = JSON.parse(raw) as { api_keys: { environment: string }[] }[];
  assert.deepEqual(
    partners.flatMap((p) => p.api_keys.map((k) => k.environment)).filter((e) => e !== "sandbox"),
    [],
  );
  assert.equal(DEMO_PRODUCTION_KEY_ROW.key_hash, hashApiKey(DEMO_CREDENTIALS.productionApiKey));
  const record = loadFixtureDir(DEFAULT_FIXTURES_DIR).keyRecords.find(
    (k) => k.keyHash === DEMO_PRODUCTION_KEY_ROW.key_hash,
  );
  assert.equal(record?.environment, "production");
  assert.equal(record?.partnerId, DEMO_CREDENTIALS.partnerId);
  // Other data is left as it is, and the record is added once.
  const files = readFixtureDir(DEFAULT_FIXTURES_DIR);
  assert.deepEqual(withDemoProductionKey(withDemoProductionKey(files)), withDemoProductionKey(files));
  const own = privateFixtures();
  try {
    const ownFiles = readFixtureDir(own.dir);
    assert.equal(withDemoProductionKey(ownFiles), ownFiles);
  } finally {
    own.remove();
  }
});
