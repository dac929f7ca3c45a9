import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sha256 } from "@noble/hashes/sha2.js";
import { KeyHashCache } from "../../src/auth/key-hash-cache.js";
import { createPartnerApi, hashApiKey } from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

describe("KeyHashCache", () => {
  test("keeps at most max keys, dropping the least recently used", () => {
    const cache = new KeyHashCache(2);
    cache.set("a", "ha");
    cache.set("b", "hb");
    assert.equal(cache.get("a"), "ha"); // a is now the most recent
    cache.set("c", "hc");
    assert.equal(cache.size, 2);
    assert.equal(cache.get("b"), undefined);
    assert.equal(cache.get("a"), "ha");
    assert.equal(cache.get("c"), "hc");
  });

  test("a key used again after another was stored moves to the newest place", () => {
    const cache = new KeyHashCache(2);
    cache.set("a", "ha");
    assert.equal(cache.get("a"), "ha"); // already the newest: nothing to move
    cache.set("b", "hb");
    assert.equal(cache.get("a"), "ha"); // a is the newest again, b the oldest
    assert.equal(cache.get("a"), "ha");
    cache.set("c", "hc");
    assert.equal(cache.get("b"), undefined);
    assert.equal(cache.get("a"), "ha");
    assert.equal(cache.get("c"), "hc");
  });

  test("replacing a cached key does not evict another", () => {
    const cache = new KeyHashCache(2);
    cache.set("a", "ha");
    cache.set("b", "hb");
    cache.set("a", "ha2");
    assert.equal(cache.size, 2);
    assert.equal(cache.get("a"), "ha2");
    assert.equal(cache.get("b"), "hb");
  });

  test("refuses a bound that is not a positive integer", () => {
    assert.throws(() => new KeyHashCache(0), RangeError);
    assert.throws(() => new KeyHashCache(1.5), RangeError);
  });
});

describe("authentication with the key hash cache", () => {
  const get = (api: ReturnType<typeof createPartnerApi>, key: string) =>
    api.handle({
      method: "GET",
      path: "/api/partner/products",
      headers: { "x-api-key": key },
      clientAddress: "192.0.2.7",
    });

  test("a key is hashed on its first request only; the record is still looked up on every one", async () => {
    const data = loadSandbox();
    let hashes = 0;
    let lookups = 0;
    const findByHash = data.keys.findByHash.bind(data.keys);
    const keys = Object.assign(Object.create(data.keys) as typeof data.keys, {
      findByHash: (hash: string) => {
        lookups++;
        return findByHash(hash);
      },
    });
    const api = createPartnerApi({
      environment: "sandbox",
      ...data,
      keys,
      sha256: (bytes: Uint8Array) => {
        hashes++;
        return sha256(bytes);
      },
    });
    for (let i = 0; i < 3; i++) assert.equal((await get(api, DEMO.sandboxApiKey)).status, 200);
    assert.equal(hashes, 1);
    assert.equal(lookups, 3);
  });

  test("a key revoked after it was used is refused on its next request", async () => {
    const data = loadSandbox();
    const api = createPartnerApi({ environment: "sandbox", ...data });
    assert.equal((await get(api, DEMO.sandboxApiKey)).status, 200);
    assert.equal((await get(api, DEMO.sandboxApiKey)).status, 200); // served from the cache
    const hash = hashApiKey(DEMO.sandboxApiKey);
    const record = await data.keys.findByHash(hash);
    assert.ok(record !== undefined);
    data.keys.put({ ...record, status: "revoked" });
    const refused = await get(api, DEMO.sandboxApiKey);
    assert.equal(refused.status, 401);
    assert.match(String(refused.body), /invalid_api_key/);
  });

  test("a key of the other environment is refused as such on every request, not only the first", async () => {
    const sandbox = createPartnerApi({ environment: "sandbox", ...loadSandbox() });
    const production = createPartnerApi({ environment: "production", ...loadSandbox() });
    // The production instance caches its key; the sandbox one must still say wrong_environment.
    await get(production, DEMO.productionApiKey);
    for (let i = 0; i < 2; i++) {
      const answer = await get(sandbox, DEMO.productionApiKey);
      assert.equal(answer.status, 401);
      assert.match(String(answer.body), /wrong_environment/);
    }
  });

  test("a malformed key is refused on every request (refusals are not cached)", async () => {
    const api = createPartnerApi({ environment: "sandbox", ...loadSandbox() });
    const typo = `${DEMO.sandboxApiKey.slice(0, -1)}${DEMO.sandboxApiKey.endsWith("A") ? "B" : "A"}`;
    for (let i = 0; i < 2; i++) {
      const answer = await get(api, typo);
      assert.equal(answer.status, 401);
      assert.match(String(answer.body), /invalid_api_key/);
    }
  });
});
