/**
 * The in-memory stores are called synchronously on the request path (http/answer-now.ts): only an
 * instance of exactly the in-memory class is, so a subclass's override still runs, and the
 * answers are the same, status, headers and body, as when every store call is awaited.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { answerNow } from "../../src/http/answer-now.js";
import {
  createPartnerApi,
  hashApiKey,
  MemoryKeyStore,
  MemoryPartnerStore,
  MemoryProductSource,
  MemoryRateLimiter,
  type PlainRequest,
  type PlainResponse,
} from "../../src/index.js";
import { fcParams } from "../fc-config.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const PRODUCTS = "/api/partner/products";

test("exactly the in-memory classes are answered at once; subclasses and other stores are awaited", () => {
  const data = loadSandbox();
  const memory = answerNow({
    rateLimiter: new MemoryRateLimiter(),
    keys: data.keys,
    partners: data.partners,
    products: data.products,
  });
  for (const [name, call] of Object.entries(memory)) assert.equal(typeof call, "function", name);

  class Limiter extends MemoryRateLimiter {}
  class Keys extends MemoryKeyStore {}
  class Partners extends MemoryPartnerStore {}
  class Products extends MemoryProductSource {}
  const subclasses = answerNow({
    rateLimiter: new Limiter(),
    keys: new Keys(),
    partners: new Partners(),
    products: new Products(),
  });
  for (const [name, call] of Object.entries(subclasses)) assert.equal(call, undefined, name);

  const own = answerNow({
    rateLimiter: { hit: async () => DECISION, peek: async () => DECISION, close: async () => undefined },
    keys: { findByHash: async () => undefined, close: async () => undefined },
    partners: { getPartner: async () => undefined, close: async () => undefined },
    products: { listProducts: async () => [], getProduct: async () => undefined },
  });
  for (const [name, call] of Object.entries(own)) assert.equal(call, undefined, name);
});

const DECISION = { allowed: true, limit: 1, remaining: 1, resetSeconds: 0, retryAfterSeconds: 0 };

test("a subclass's override of an in-memory store runs on every request", async () => {
  const data = loadSandbox();
  const calls: string[] = [];
  class Limiter extends MemoryRateLimiter {
    override hit(key: string, limit: number, windowMs: number) {
      calls.push("hit");
      return super.hit(key, limit, windowMs);
    }
    override peek(key: string, limit: number, windowMs: number) {
      calls.push("peek");
      return super.peek(key, limit, windowMs);
    }
  }
  class Keys extends MemoryKeyStore {
    override findByHash(keyHash: string) {
      calls.push("findByHash");
      return super.findByHash(keyHash);
    }
  }
  class Partners extends MemoryPartnerStore {
    override getPartner(partnerId: string) {
      calls.push("getPartner");
      return super.getPartner(partnerId);
    }
  }
  class Products extends MemoryProductSource {
    override getProduct(partnerId: string, slug: string) {
      calls.push("getProduct");
      return super.getProduct(partnerId, slug);
    }
  }
  const keys = new Keys();
  const partners = new Partners();
  const [product] = await data.products.listProducts(DEMO.partnerId);
  assert.ok(product !== undefined);
  const api = createPartnerApi({
    ...data,
    environment: "sandbox",
    rateLimiter: new Limiter(),
    keys,
    partners,
    products: new Products(await data.products.listProducts(DEMO.partnerId)),
  });
  for (const key of await allKeys(data.keys)) keys.put(key);
  partners.put((await data.partners.getPartner(DEMO.partnerId))!);

  const res = await api.handle(get(`${PRODUCTS}/${product.slug}`, DEMO.sandboxApiKey));
  assert.equal(res.status, 200);
  assert.deepEqual(calls, ["peek", "findByHash", "getPartner", "hit", "getProduct"]);
});

/** The key records of the demo credentials. */
async function allKeys(keys: MemoryKeyStore) {
  const demoKeys = [
    DEMO.sandboxApiKey,
    DEMO.productionApiKey,
    DEMO.revokedSandboxApiKey,
    DEMO.otherPartnerSandboxApiKey,
  ];
  const hashes = demoKeys.map((k) => hashApiKey(k));
  return (await Promise.all(hashes.map((h) => keys.findByHash(h)))).filter((r) => r !== undefined);
}

function get(path: string, key: string | undefined, clientAddress = "192.0.2.1"): PlainRequest {
  const [p, query = ""] = path.split("?");
  return {
    method: "GET",
    path: p!,
    query,
    headers: key === undefined ? {} : { "x-api-key": key },
    clientAddress,
  };
}

/** Two APIs on the same fixtures and clock: in-memory stores as given, or each behind a subclass (awaited). */
async function twinApis() {
  let clock = Date.parse("2026-11-23T12:00:00Z");
  const now = () => clock;
  const ids = () => {
    let n = 0;
    return () => `req_${String(n++).padStart(6, "0")}`;
  };
  const direct = loadSandbox();
  const awaited = loadSandbox();
  class Keys extends MemoryKeyStore {}
  class Partners extends MemoryPartnerStore {}
  class Products extends MemoryProductSource {}
  const keys = new Keys(await allKeys(awaited.keys));
  const partners = new Partners(
    (await Promise.all(["northwind", "contoso"].map((id) => awaited.partners.getPartner(id)))).filter(
      (p) => p !== undefined,
    ),
  );
  const products = new Products([
    ...(await awaited.products.listProducts("northwind")),
    ...(await awaited.products.listProducts("contoso")),
  ]);
  class Limiter extends MemoryRateLimiter {}
  const common = { environment: "sandbox" as const, rateLimitOverride: 4, failedAuthPerMinute: 3 };
  const first = createPartnerApi({
    ...direct,
    ...common,
    rateLimiter: new MemoryRateLimiter({ now }),
    generateRequestId: ids(),
  });
  const second = createPartnerApi({
    ...awaited,
    ...common,
    keys,
    partners,
    products,
    rateLimiter: new Limiter({ now }),
    generateRequestId: ids(),
  });
  return { first, second, tick: (ms: number) => (clock += ms) };
}

test("answers at once are the answers awaited: same status, headers and body, request by request", async () => {
  const slugs = ["usdc-base-prime", "no-such-product", "BAD SLUG", ""];
  const keys = [
    DEMO.sandboxApiKey,
    DEMO.otherPartnerSandboxApiKey,
    DEMO.productionApiKey,
    DEMO.revokedSandboxApiKey,
    "ypk_test_unknown",
    undefined,
  ];
  const request = fc.record({
    key: fc.constantFrom(...keys),
    slug: fc.constantFrom(...slugs),
    tail: fc.constantFrom("", "/yield-calc?amount=1000", `/position?address=${DEMO.walletWithPositions}`),
    list: fc.boolean(),
    address: fc.constantFrom("192.0.2.1", "192.0.2.2"),
    wait: fc.constantFrom(0, 0, 0, 30_000, 61_000),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 30 }), async (requests) => {
      const { first, second, tick } = await twinApis();
      for (const r of requests) {
        tick(r.wait);
        const path = r.list ? PRODUCTS : `${PRODUCTS}/${r.slug}${r.tail}`;
        const a: PlainResponse = await first.handle(get(path, r.key, r.address));
        const b: PlainResponse = await second.handle(get(path, r.key, r.address));
        assert.deepEqual(a, b, `${path} with ${r.key ?? "no key"}`);
      }
    }),
    fcParams(),
  );
});
