/**
 * The one seam between the API and its stores (stores/maybe-promise.ts): a store method answers
 * with its value or a promise of it, and the API awaits only a promise. A store answering at once
 * (the in-memory ones) is not waited for; a store answering with a promise, or with a thenable that
 * is not a promise, gets the same answers; a store failing at once is answered as one whose promise
 * rejects (503 for `StoreUnavailableError`, never a 500).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  createPartnerApi,
  type ErrorAnswer,
  type KeyStore,
  type MaybePromise,
  MemoryKeyStore,
  MemoryPartnerStore,
  MemoryProductSource,
  MemoryRateLimiter,
  type PartnerApi,
  type PartnerApiOptions,
  type PartnerStore,
  type PlainRequest,
  type PlainResponse,
  type PositionSource,
  type PriceSource,
  type ProductSource,
  type RateLimiter,
  StoreUnavailableError,
} from "../../src/index.js";
import { isPromiseLike } from "../../src/stores/maybe-promise.js";
import { fcParams } from "../../src/testing/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const PRODUCTS = "/api/partner/products";
const PRODUCT = `${PRODUCTS}/usdc-base-prime`;
const POSITION = `${PRODUCT}/position?address=${DEMO.walletWithPositions}`;

/** How a store answers: the value itself, a promise of it, or a thenable that is not a promise. */
type Form = "value" | "promise" | "thenable";
const FORMS: readonly Form[] = ["value", "promise", "thenable"];

/**
 * `compute()` answered in `form`; when it throws, the value form throws at once and the others
 * reject. The thenable computes only when its `then` is called: a store call the API did not
 * wait for would not happen at all.
 */
function answer<T>(form: Form, compute: () => T): MaybePromise<T> {
  if (form === "value") return compute();
  if (form === "promise") return new Promise<T>((resolve) => resolve(compute()));
  return {
    // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a promise, on purpose
    then<A = T, B = never>(
      onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
      onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
    ): PromiseLike<A | B> {
      let settled: Promise<T>;
      try {
        settled = Promise.resolve(compute());
      } catch (error) {
        settled = Promise.reject(error);
      }
      return settled.then(onFulfilled, onRejected);
    },
  };
}

type StoreOptions = Pick<
  PartnerApiOptions,
  "keys" | "partners" | "products" | "positions" | "prices" | "rateLimiter"
>;

/** The sandbox's stores, each call answered in `form` (`failing` throws in its place). */
function storesAnswering(
  form: Form,
  limiter: MemoryRateLimiter,
  failing?: { readonly method: string; readonly error: Error },
): StoreOptions {
  const data = loadSandbox();
  const call = <T>(method: string, compute: () => T): MaybePromise<T> =>
    answer(form, () => {
      if (failing?.method === method) throw failing.error;
      return compute();
    });
  const rateLimiter: RateLimiter = {
    hit: (key, limit, windowMs) => call("hit", () => limiter.hit(key, limit, windowMs)),
    peek: (key, limit, windowMs) => call("peek", () => limiter.peek(key, limit, windowMs)),
    close: () => limiter.close(),
  };
  const keys: KeyStore = {
    findByHash: (hash) => call("findByHash", () => data.keys.findByHash(hash)),
    close: () => data.keys.close(),
  };
  const partners: PartnerStore = {
    getPartner: (id) => call("getPartner", () => data.partners.getPartner(id)),
    close: () => data.partners.close(),
  };
  const products: ProductSource = {
    listProducts: (id) => call("listProducts", () => data.products.listProducts(id)),
    getProduct: (id, slug) => call("getProduct", () => data.products.getProduct(id, slug)),
  };
  const positions: PositionSource = {
    getHolding: (product, wallet) => call("getHolding", () => data.positions.getHolding(product, wallet)),
  };
  const prices: PriceSource = {
    getUsdPriceWad: (product) => call("getUsdPriceWad", () => data.prices.getUsdPriceWad(product)),
  };
  return { rateLimiter, keys, partners, products, positions, prices };
}

function get(
  path: string,
  key: string | undefined = DEMO.sandboxApiKey,
  clientAddress = "192.0.2.1",
): PlainRequest {
  const [p, query = ""] = path.split("?");
  return {
    method: "GET",
    path: p!,
    query,
    headers: key === undefined ? {} : { "x-api-key": key },
    clientAddress,
  };
}

/** Request ids counted from 0, so two APIs' answers can be compared whole. */
function ids(): () => string {
  let n = 0;
  return () => `req_${String(n++).padStart(6, "0")}`;
}

/**
 * Microtask turns until `answer` settles, counted by a chain of awaits run beside it: a request
 * that waits for nothing settles in fewer turns than one that awaits its stores.
 */
async function turnsUntilSettled(answer: Promise<unknown>): Promise<number> {
  let settled = false;
  answer.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  let turns = 0;
  while (!settled) {
    await null;
    turns++;
    assert.ok(turns < 10_000, "the request never settled");
  }
  return turns;
}

test("isPromiseLike: promises and thenables are awaited, every other answer is not", () => {
  assert.equal(isPromiseLike(Promise.resolve(1)), true);
  assert.equal(isPromiseLike(Promise.reject(new Error("x")).catch(() => 0)), true);
  assert.equal(isPromiseLike(answer("thenable", () => 1)), true);
  // biome-ignore lint/suspicious/noThenProperty: a callable thenable, on purpose
  const callable = Object.assign(() => 0, { then: (resolve: (v: number) => void) => resolve(1) });
  assert.equal(isPromiseLike(callable as unknown as MaybePromise<number>), true);
  for (const value of [
    undefined,
    null,
    0,
    0n,
    "",
    false,
    [],
    { keyHash: "ab", status: "active" },
    Object.freeze({ allowed: true }),
    // biome-ignore lint/suspicious/noThenProperty: a `then` that is not a method, on purpose
    { then: "not a function" },
    () => 0,
  ]) {
    assert.equal(isPromiseLike(value as MaybePromise<unknown>), false, String(value));
  }
});

test("with stores answering at once, a partner GET waits no longer than a route that asks no store", async () => {
  const api = (form: Form): PartnerApi =>
    createPartnerApi({
      ...storesAnswering(form, new MemoryRateLimiter()),
      environment: "sandbox",
    });
  const paths = [PRODUCT, PRODUCTS, `${PRODUCT}/yield-calc?amount=1000`, POSITION];
  const direct = api("value");
  const baseline = await turnsUntilSettled(direct.handle(get("/api/partner/openapi.json", undefined)));
  for (const path of paths) {
    assert.equal((await direct.handle(get(path))).status, 200, path);
    const turns = await turnsUntilSettled(direct.handle(get(path)));
    assert.ok(turns <= baseline, `${path}: ${turns} turns, a route that asks no store ${baseline}`);
  }
  // The count can fail: the same requests answered with promises wait for them.
  for (const form of ["promise", "thenable"] as const) {
    const awaited = api(form);
    for (const path of paths) {
      assert.equal((await awaited.handle(get(path))).status, 200, path);
      const turns = await turnsUntilSettled(awaited.handle(get(path)));
      assert.ok(turns > baseline, `${form} ${path}: ${turns} turns, not more than ${baseline}`);
    }
  }
});

test("the in-memory stores' own classes are answered at once, and the API waits for none of them", async () => {
  const data = loadSandbox();
  for (const answered of [
    new MemoryRateLimiter().peek("auth:192.0.2.1", 30, 60_000),
    data.keys.findByHash("0".repeat(64)),
    data.partners.getPartner(DEMO.partnerId),
    data.products.getProduct(DEMO.partnerId, "usdc-base-prime"),
    data.products.listProducts(DEMO.partnerId),
  ]) {
    assert.equal(isPromiseLike(answered), false);
  }
  const api = createPartnerApi({ ...data, environment: "sandbox" });
  const baseline = await turnsUntilSettled(api.handle(get("/api/partner/openapi.json", undefined)));
  assert.ok((await turnsUntilSettled(api.handle(get(PRODUCT)))) <= baseline);
});

test("a subclass's override, or a method replaced by an async one, is called and its answer used", async () => {
  const data = loadSandbox();
  const calls: string[] = [];
  class Limiter extends MemoryRateLimiter {
    override hit(key: string, limit: number, windowMs: number) {
      calls.push("hit");
      return super.hit(key, limit, windowMs);
    }
  }
  class Partners extends MemoryPartnerStore {
    override getPartner(partnerId: string) {
      calls.push("getPartner");
      const partner = super.getPartner(partnerId);
      return partner && { ...partner, rateLimits: { sandbox: 7 } };
    }
  }
  const keys = Object.assign(new MemoryKeyStore(data.keyRecords), {
    async findByHash(keyHash: string) {
      calls.push("findByHash");
      return data.keys.findByHash(keyHash);
    },
  });
  const products = Object.assign(new MemoryProductSource(data.productRecords), {
    async getProduct(partnerId: string, slug: string) {
      calls.push("getProduct");
      return data.products.getProduct(partnerId, slug);
    },
  });
  const api = createPartnerApi({
    ...data,
    environment: "sandbox",
    rateLimiter: new Limiter(),
    keys,
    partners: new Partners(data.partnerList),
    products,
  });
  const res = await api.handle(get(PRODUCT));
  assert.equal(res.status, 200);
  assert.equal(res.headers["ratelimit-policy"], '"sandbox";q=7;w=60', "the override's partner was used");
  assert.deepEqual(calls, ["findByHash", "getPartner", "hit", "getProduct"]);
});

/** Three APIs on the same fixtures and clock, their stores answering as values, promises and thenables. */
function tripletApis() {
  let clock = Date.parse("2026-11-23T12:00:00Z");
  const now = () => clock;
  const common = { environment: "sandbox" as const, rateLimitOverride: 4, failedAuthPerMinute: 3 };
  const apis = FORMS.map((form) =>
    createPartnerApi({
      ...storesAnswering(form, new MemoryRateLimiter({ now })),
      ...common,
      generateRequestId: ids(),
    }),
  );
  return { apis, tick: (ms: number) => (clock += ms) };
}

test("stores answering with values, promises or thenables get the same answers, request by request", async () => {
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
      const { apis, tick } = tripletApis();
      const [values, ...others] = apis;
      for (const r of requests) {
        tick(r.wait);
        const path = r.list ? PRODUCTS : `${PRODUCTS}/${r.slug}${r.tail}`;
        const want: PlainResponse = await values!.handle(get(path, r.key, r.address));
        for (const [i, api] of others.entries()) {
          const got = await api.handle(get(path, r.key, r.address));
          assert.deepEqual(got, want, `${FORMS[i + 1]}: ${path} with ${r.key ?? "no key"}`);
        }
      }
    }),
    fcParams(process.env),
  );
});

/** Each store call, and a request that reaches it. */
const CALLS: readonly { readonly method: string; readonly request: PlainRequest }[] = [
  { method: "findByHash", request: get(PRODUCTS) },
  { method: "getPartner", request: get(PRODUCTS) },
  { method: "hit", request: get(PRODUCTS) },
  { method: "hit", request: get(PRODUCTS, DEMO.revokedSandboxApiKey) }, // the failure's count
  { method: "getProduct", request: get(PRODUCT) },
  { method: "listProducts", request: get(PRODUCTS) },
  { method: "getHolding", request: get(POSITION) },
  { method: "getUsdPriceWad", request: get(POSITION) },
];

test("a store down is 503 with Retry-After whether it throws at once, rejects or its thenable rejects", async () => {
  for (const { method, request } of CALLS) {
    const answers: PlainResponse[] = [];
    for (const form of FORMS) {
      const reported: { error: unknown; answer: ErrorAnswer }[] = [];
      const error = new StoreUnavailableError(`${method} is down`, 7);
      const api = createPartnerApi({
        ...storesAnswering(form, new MemoryRateLimiter(), { method, error }),
        environment: "sandbox",
        generateRequestId: ids(),
        onError: (e, _id, answered) => reported.push({ error: e, answer: answered }),
      });
      const res = await api.handle(request);
      const label = `${method} answering as a ${form}`;
      assert.equal(res.status, 503, label);
      assert.equal(res.headers["retry-after"], "7", label);
      assert.deepEqual(reported, [{ error, answer: { status: 503, code: "service_unavailable" } }], label);
      answers.push(res);
    }
    assert.deepEqual(answers[1], answers[0], `${method}: a promise's rejection is answered as a throw`);
    assert.deepEqual(answers[2], answers[0], `${method}: a thenable's rejection is answered as a throw`);
  }
});

test("any other error of a store is 500 internal_error whatever the form it fails in", async () => {
  for (const { method, request } of CALLS) {
    for (const form of FORMS) {
      const api = createPartnerApi({
        ...storesAnswering(form, new MemoryRateLimiter(), { method, error: new TypeError("a bug") }),
        environment: "sandbox",
      });
      assert.equal((await api.handle(request)).status, 500, `${method} answering as a ${form}`);
    }
  }
});
