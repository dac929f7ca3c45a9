/** Keys into partners.json: ours by their hash; another system's refused with the reason (docs/data.md). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createPartnerApi, generateApiKey, hashApiKey, loadFixtures } from "@partner-yield/core";
import { DEFAULT_FIXTURES_DIR, readFixtureDir } from "@partner-yield/node-adapter";
import { apiKeyRow, ForeignApiKeyError } from "../src/index.js";

test("a generated key becomes the row partners.json stores: its SHA-256, environment and label, never the key", () => {
  const key = generateApiKey("production");
  const row = apiKeyRow(key, "Acme production");
  assert.deepEqual(row, {
    key_hash: hashApiKey(key),
    environment: "production",
    status: "active",
    label: "Acme production",
  });
  assert.ok(!JSON.stringify(row).includes(key.slice(9)));
  assert.deepEqual(Object.keys(apiKeyRow(generateApiKey("sandbox"))), ["key_hash", "environment", "status"]);
});

test("the row, added to a partner, authenticates the key", async () => {
  const key = generateApiKey("sandbox");
  const files = readFixtureDir(DEFAULT_FIXTURES_DIR);
  const partners = structuredClone(files["partners.json"]) as { api_keys: unknown[] }[];
  partners[1]!.api_keys.push(apiKeyRow(key, "imported"));
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadFixtures({ ...files, "partners.json": partners }),
  });
  const res = await api.handle({
    method: "GET",
    path: "/api/partner/products",
    headers: { "x-api-key": key },
  });
  assert.equal(res.status, 200);
});

test("a key of another system's format is refused with the reason and the way forward", () => {
  for (const foreign of [
    "sk_live_51HqLyjWDarjtT1zdp7dc",
    "0b7e5a43-9f1c-4c2e-8d4e-3a9f2b6c1d7e",
    "AKIAIOSFODNN7EXAMPLE",
  ]) {
    assert.throws(
      () => apiKeyRow(foreign),
      (error: unknown) => {
        assert.ok(error instanceof ForeignApiKeyError);
        assert.match(error.message, /another format cannot be imported/);
        assert.match(error.message, /ypk_test_ or ypk_live_/);
        assert.match(error.message, /never authenticate/);
        assert.match(error.message, /generateApiKey/);
        assert.ok(!error.message.includes(foreign), "the refusal must not echo the key");
        return true;
      },
    );
  }
});

test("one of our keys with a typo is refused as a typo, not as a foreign key", () => {
  const key = generateApiKey("sandbox");
  const typo = key.slice(0, 20) + (key[20] === "a" ? "b" : "a") + key.slice(21);
  assert.throws(() => apiKeyRow(typo), /has our prefix but is not one we issued.*a typo\?/);
  assert.throws(() => apiKeyRow(key.slice(0, -1)), /47 characters/);
});
