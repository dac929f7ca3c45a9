/**
 * The API test suite, written once as a factory (as hono does with `runTest({ newRouter })`):
 * `runApiSuite(name, mount)` runs every endpoint, error code and status of the contract against
 * whatever `mount` puts the API behind — `handle()` in-process, or a real node:http server.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  convertToAssets,
  createPartnerApi,
  ERRORS,
  type EventStore,
  formatUnits,
  generateApiKey,
  MemoryEventStore,
  MemoryRateLimiter,
  netApy,
  type PartnerApi,
  type PartnerApiHandler,
  type PartnerApiOptions,
  Position,
  Problem,
  Product,
  ProductListResponse,
  quoteYield,
  type RateLimiter,
  StoreUnavailableError,
  signBody,
  toChecksumAddress,
  usdValueCents,
} from "../src/index.js";
import { DEMO, loadSandbox } from "./sandbox.js";

export interface SentRequest {
  readonly method: string;
  /** Path including the query string. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Uint8Array;
}

export interface SentResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Record<string, string>;
  readonly text: string;
}

export interface Mounted {
  send(request: SentRequest): Promise<SentResponse>;
  close(): Promise<void>;
}

export type Mount = (api: PartnerApiHandler) => Promise<Mounted>;

/**
 * Where the API under test keeps its state. Default: the sandbox fixtures in memory. A durable
 * backend (PostgreSQL, Redis) gives fresh stores holding the same fixtures for each API the suite
 * starts, and a limiter two APIs can share; the API closes what it is given.
 */
export interface ApiBackend {
  stores(): Promise<Partial<PartnerApiOptions>>;
  rateLimiter(): Promise<RateLimiter>;
}

/** The API in-process: `handle()` called directly, no socket. */
export const inProcess: Mount = async (api) => ({
  async send(request) {
    const q = request.path.indexOf("?");
    const body = typeof request.body === "string" ? new TextEncoder().encode(request.body) : request.body;
    const res = await api.handle({
      method: request.method,
      path: q === -1 ? request.path : request.path.slice(0, q),
      query: q === -1 ? "" : request.path.slice(q + 1),
      headers: Object.fromEntries(
        Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
      ),
      body,
      clientAddress: "203.0.113.7",
    });
    return { status: res.status, headers: res.headers, text: res.body ?? "" };
  },
  close: () => Promise.resolve(),
});

const P = "/api/partner";
const KEY = DEMO.sandboxApiKey;
const WALLET = DEMO.walletWithPositions;
const EMPTY_WALLET = "0x000000000000000000000000000000000000dEaD";

interface Target extends Mounted {
  readonly api: PartnerApi;
  get(path: string, key?: string | null): Promise<SentResponse>;
  postEvent(body: string, overrides?: Record<string, string | null>): Promise<SentResponse>;
}

async function start(
  mount: Mount,
  backend: ApiBackend | undefined,
  options: Partial<PartnerApiOptions> = {},
): Promise<Target> {
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadSandbox(),
    ...(await backend?.stores()),
    rateLimitOverride: 1_000_000,
    ...options,
  });
  const mounted = await mount(api);
  return {
    api,
    send: (r) => mounted.send(r),
    close: async () => {
      await mounted.close();
      await api.close();
    },
    get: (path, key = KEY) =>
      mounted.send({ method: "GET", path, headers: key === null ? {} : { "x-api-key": key } }),
    postEvent: (body, overrides = {}) => {
      const headers: Record<string, string> = {};
      const defaults: Record<string, string> = {
        "content-type": "application/json",
        "x-api-key": KEY,
        "x-partner-event": eventTypeOf(body),
        "x-partner-signature": signBody(DEMO.signingSecret, new TextEncoder().encode(body)),
        "idempotency-key": `key-${crypto.randomUUID()}`,
      };
      for (const [name, value] of Object.entries({ ...defaults, ...overrides })) {
        if (value !== null) headers[name] = value;
      }
      return mounted.send({ method: "POST", path: `${P}/webhooks/inbound`, headers, body });
    },
  };
}

function eventTypeOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { event_type?: unknown };
    return typeof parsed.event_type === "string" ? parsed.event_type : "partner.user.created";
  } catch {
    return "partner.user.created";
  }
}

function eventBody(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: `u_${crypto.randomUUID()}`, country: "DE" },
    ...overrides,
  });
}

function json(res: SentResponse): Record<string, unknown> {
  return JSON.parse(res.text) as Record<string, unknown>;
}

/** Asserts a problem+json error with this status and code, and returns its body. */
function expectProblem(
  res: SentResponse,
  status: number,
  code: keyof typeof ERRORS,
): Record<string, unknown> {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text}`);
  assert.match(res.headers["content-type"] ?? "", /^application\/problem\+json/);
  const body = json(res);
  Problem.parse(body);
  assert.equal(body["code"], code, res.text);
  assert.equal(body["status"], status);
  assert.equal(body["success"], false);
  assert.equal(body["type"], `https://partner-yield.dev/errors/${code}`);
  assert.equal(body["request_id"], res.headers["x-request-id"]);
  assert.equal(ERRORS[code].status, status);
  return body;
}

export function runApiSuite(name: string, mount: Mount, backend?: ApiBackend): void {
  const newLimiter = async () => (await backend?.rateLimiter()) ?? new MemoryRateLimiter();
  describe(`API suite: ${name}`, () => {
    let t: Target;
    before(async () => {
      t = await start(mount, backend);
    });
    after(async () => {
      await t.close();
    });

    describe("routing (CONTRACT §9: before authentication)", () => {
      test("unknown path is 404 not_found, even without a key", async () => {
        expectProblem(await t.get(`${P}/nope`, null), 404, "not_found");
        expectProblem(await t.get("/", null), 404, "not_found");
        expectProblem(await t.get(`${P}/products/`, null), 404, "not_found");
        expectProblem(await t.get(`${P}/products/usdc-base-prime/position/x`, null), 404, "not_found");
      });
      test("known path with another method is 405 with Allow", async () => {
        const res = await t.send({ method: "POST", path: `${P}/products`, headers: {} });
        expectProblem(res, 405, "method_not_allowed");
        assert.equal(res.headers["allow"], "GET, HEAD");
        const res2 = await t.send({
          method: "GET",
          path: `${P}/webhooks/inbound`,
          headers: { "x-api-key": KEY },
        });
        expectProblem(res2, 405, "method_not_allowed");
        assert.equal(res2.headers["allow"], "POST");
        const res3 = await t.send({ method: "DELETE", path: `${P}/products/usdc-base-prime`, headers: {} });
        expectProblem(res3, 405, "method_not_allowed");
      });
      test("HEAD is answered as GET without a body", async () => {
        const res = await t.send({ method: "HEAD", path: `${P}/products`, headers: { "x-api-key": KEY } });
        assert.equal(res.status, 200);
        assert.equal(res.text, "");
        assert.match(res.headers["content-type"] ?? "", /^application\/json/);
        assert.ok(res.headers["ratelimit"]);
        const get = await t.get(`${P}/products`);
        assert.equal(res.headers["content-length"], String(new TextEncoder().encode(get.text).byteLength));
      });
      test("HEAD's Content-Length is GET's body length in bytes, not characters", async () => {
        const path = `${P}/openapi.json`;
        const get = await t.get(path, null);
        assert.notEqual(get.text.length, new TextEncoder().encode(get.text).byteLength); // non-ASCII
        const head = await t.send({ method: "HEAD", path, headers: {} });
        assert.equal(head.text, "");
        assert.equal(head.headers["content-length"], String(new TextEncoder().encode(get.text).byteLength));
      });
      test("every response carries the common headers (CONTRACT §9)", async () => {
        for (const res of [await t.get(`${P}/products`), await t.get(`${P}/nope`, null)]) {
          assert.match(res.headers["x-request-id"] ?? "", /^req_/);
          assert.equal(res.headers["cache-control"], "no-store");
          assert.equal(res.headers["x-content-type-options"], "nosniff");
          assert.equal(res.headers["access-control-allow-origin"], undefined);
        }
      });
      test("the OpenAPI document is served without a key", async () => {
        const res = await t.get(`${P}/openapi.json`, null);
        assert.equal(res.status, 200);
        assert.equal(json(res)["openapi"], "3.1.0");
      });
    });

    describe("authentication (CONTRACT §4)", () => {
      test("missing key → 401 missing_api_key", async () => {
        expectProblem(await t.get(`${P}/products`, null), 401, "missing_api_key");
        expectProblem(await t.get(`${P}/products`, ""), 401, "missing_api_key");
      });
      test("malformed, unknown or revoked key → 401 invalid_api_key", async () => {
        expectProblem(await t.get(`${P}/products`, "not-a-key"), 401, "invalid_api_key");
        const typo = KEY.slice(0, -8) + (KEY.at(-8) === "a" ? "b" : "a") + KEY.slice(-7);
        expectProblem(await t.get(`${P}/products`, typo), 401, "invalid_api_key");
        expectProblem(await t.get(`${P}/products`, generateApiKey("sandbox")), 401, "invalid_api_key");
        expectProblem(await t.get(`${P}/products`, DEMO.revokedSandboxApiKey), 401, "invalid_api_key");
      });
      test("a production key on the sandbox → 401 wrong_environment naming the key's environment", async () => {
        const body = expectProblem(
          await t.get(`${P}/products`, DEMO.productionApiKey),
          401,
          "wrong_environment",
        );
        assert.match(String(body["detail"]), /production/);
      });
      test("a bad key wins over bad parameters and unknown products", async () => {
        expectProblem(
          await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=-1`, "nope"),
          401,
          "invalid_api_key",
        );
        expectProblem(await t.get(`${P}/products/no-such-product`, null), 401, "missing_api_key");
      });
      test("errors never echo the key", async () => {
        const bogus = generateApiKey("sandbox");
        const res = await t.get(`${P}/products`, bogus);
        assert.ok(!res.text.includes(bogus));
        assert.ok(!res.text.includes(KEY));
      });
    });

    describe("products (CONTRACT §8)", () => {
      test("the list holds every product of the caller, every status, ordered by slug, each valid", async () => {
        const res = await t.get(`${P}/products`);
        assert.equal(res.status, 200);
        assert.match(res.headers["content-type"] ?? "", /^application\/json; charset=utf-8$/);
        const body = ProductListResponse.parse(json(res));
        const slugs = body.data.map((p) => p.slug);
        assert.deepEqual(slugs, [...slugs].sort());
        assert.equal(slugs.length, 6);
        assert.deepEqual(
          new Set(body.data.map((p) => p.status)),
          new Set(["active", "paused", "deprecated"]),
        );
        assert.ok(body.data.every((p) => p.partner === "Northwind Wallet"));
        assert.ok(body.data.some((p) => p.latest_metrics === null));
      });
      test("get agrees with the list, field for field", async () => {
        const list = ProductListResponse.parse(json(await t.get(`${P}/products`))).data;
        for (const item of list) {
          const res = await t.get(`${P}/products/${item.slug}`);
          assert.equal(res.status, 200);
          const body = json(res) as { success: boolean; data: unknown };
          assert.equal(body.success, true);
          assert.deepEqual(Product.parse(body.data), item);
        }
      });
      test("net_apy_for_user follows the fee formula of CONTRACT §2", async () => {
        const list = ProductListResponse.parse(json(await t.get(`${P}/products`))).data;
        for (const p of list) {
          if (p.latest_metrics === null) continue;
          const a = BigInt(p.latest_metrics.underlying_apy.replace(".", "").replace(/^(-?)0+(?=\d)/, "$1"));
          const scale = 10n ** BigInt(18 - (p.latest_metrics.underlying_apy.split(".")[1]?.length ?? 0));
          const expected = formatUnits(netApy(a * scale, p.service_fee_bps, p.partner_fee_bps), 18);
          assert.equal(p.latest_metrics.net_apy_for_user, expected, p.slug);
        }
        const loss = list.find((p) => p.slug === "eurc-base-drawdown")!;
        assert.equal(loss.latest_metrics!.net_apy_for_user, loss.latest_metrics!.underlying_apy);
      });
      test("unknown slug, malformed slug and another partner's slug are all 404 product_not_found", async () => {
        expectProblem(await t.get(`${P}/products/no-such-product`), 404, "product_not_found");
        expectProblem(await t.get(`${P}/products/USDC-BASE-PRIME`), 404, "product_not_found");
        expectProblem(await t.get(`${P}/products/%2e%2e`), 404, "product_not_found");
        expectProblem(await t.get(`${P}/products/usdc-ethereum-contoso`), 404, "product_not_found");
        expectProblem(
          await t.get(`${P}/products/usdc-ethereum-contoso/position?address=${WALLET}`),
          404,
          "product_not_found",
        );
        expectProblem(
          await t.get(`${P}/products/usdc-ethereum-contoso/yield-calc?amount=1`),
          404,
          "product_not_found",
        );
      });
      test("a slug outside the pattern never reaches the product source", async () => {
        const data = loadSandbox();
        const asked: string[] = [];
        // A store with a case-insensitive collation would match "USDC-BASE-PRIME" if it were asked.
        const r = await start(mount, backend, {
          products: {
            listProducts: data.products.listProducts.bind(data.products),
            getProduct: (partnerId: string, slug: string) => {
              asked.push(slug);
              return data.products.getProduct(partnerId, slug.toLowerCase());
            },
          },
        });
        try {
          for (const slug of ["USDC-BASE-PRIME", "-usdc-base-prime", `a${"b".repeat(64)}`])
            expectProblem(await r.get(`${P}/products/${slug}`), 404, "product_not_found");
          assert.deepEqual(asked, []);
          assert.equal((await r.get(`${P}/products/usdc-base-prime`)).status, 200);
        } finally {
          await r.close();
        }
      });
      test("partners are isolated: the second partner sees only its own products", async () => {
        const res = await t.get(`${P}/products`, DEMO.otherPartnerSandboxApiKey);
        const body = ProductListResponse.parse(json(res));
        assert.deepEqual(
          body.data.map((p) => p.slug),
          ["usdc-ethereum-contoso", "wbtc-avalanche-contoso"],
        );
        expectProblem(
          await t.get(`${P}/products/usdc-base-prime`, DEMO.otherPartnerSandboxApiKey),
          404,
          "product_not_found",
        );
      });
    });

    describe("position (CONTRACT §2, §3)", () => {
      test("a wallet with shares: convertToAssets with virtual shares, USD in cents", async () => {
        const data = loadSandbox();
        const product = (await data.products.getProduct(DEMO.partnerId, "usdc-base-prime"))!;
        const res = await t.get(`${P}/products/usdc-base-prime/position?address=${WALLET}`);
        assert.equal(res.status, 200);
        const pos = Position.parse((json(res) as { data: unknown }).data);
        const shares = 1500250000000000000000n;
        const assets = convertToAssets(
          shares,
          12345678901234n,
          11900000000000000000000000n,
          product.decimalsOffset,
        );
        assert.deepEqual(pos, {
          wallet_address: WALLET,
          product_slug: "usdc-base-prime",
          shares: formatUnits(shares, 18),
          assets: formatUnits(assets, 6),
          usd_value: formatUnits(usdValueCents(assets, 6, 999800000000000000n), 2),
        });
        assert.equal(pos.shares, "1500.25");
      });
      test("a wallet with shares but no known USD price → 503 service_unavailable, Retry-After: 60", async () => {
        const r = await start(mount, backend, {
          prices: { getUsdPriceWad: () => Promise.resolve(undefined) },
        });
        try {
          const res = await r.get(`${P}/products/usdc-base-prime/position?address=${WALLET}`);
          expectProblem(res, 503, "service_unavailable");
          assert.equal(res.headers["retry-after"], "60");
          // No shares, no price needed.
          const empty = await r.get(`${P}/products/usdc-base-prime/position?address=${EMPTY_WALLET}`);
          assert.equal(empty.status, 200, empty.text);
        } finally {
          await r.close();
        }
      });
      test("a wallet that holds nothing gets 200 with zeros", async () => {
        const res = await t.get(`${P}/products/usdc-base-prime/position?address=${EMPTY_WALLET}`);
        assert.equal(res.status, 200);
        assert.deepEqual((json(res) as { data: unknown }).data, {
          wallet_address: EMPTY_WALLET,
          product_slug: "usdc-base-prime",
          shares: "0",
          assets: "0",
          usd_value: "0",
        });
      });
      test("all-lowercase and all-uppercase addresses are accepted and echoed in EIP-55 form", async () => {
        for (const form of [WALLET.toLowerCase(), `0x${WALLET.slice(2).toUpperCase()}`]) {
          const res = await t.get(`${P}/products/usdc-base-prime/position?address=${form}`);
          assert.equal(res.status, 200, res.text);
          assert.equal(
            (json(res) as { data: { wallet_address: string } }).data.wallet_address,
            toChecksumAddress(WALLET),
          );
        }
      });
      test("a mixed-case address with a bad checksum → 400 invalid_address", async () => {
        const flipped = WALLET.slice(0, 3) + (WALLET[3] === "a" ? "A" : "a") + WALLET.slice(4);
        const body = expectProblem(
          await t.get(`${P}/products/usdc-base-prime/position?address=${flipped}`),
          400,
          "invalid_address",
        );
        assert.deepEqual((body["errors"] as { pointer: string }[])[0]?.pointer, "/query/address");
      });
      test("malformed or missing addresses → 400 invalid_address; repeated → 400 invalid_parameter", async () => {
        for (const bad of [
          "0x123",
          "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
          `0X${"a".repeat(40)}`,
          `0x${"g".repeat(40)}`,
          `0x${"a".repeat(41)}`,
          "",
          "%20",
        ]) {
          expectProblem(
            await t.get(`${P}/products/usdc-base-prime/position?address=${bad}`),
            400,
            "invalid_address",
          );
        }
        expectProblem(await t.get(`${P}/products/usdc-base-prime/position`), 400, "invalid_address");
        expectProblem(
          await t.get(`${P}/products/usdc-base-prime/position?address=${WALLET}&address=${WALLET}`),
          400,
          "invalid_parameter",
        );
        expectProblem(
          await t.get(`${P}/products/usdc-base-prime/position?address=%zz`),
          400,
          "invalid_parameter",
        );
      });
      test("the product is resolved before the address is validated", async () => {
        expectProblem(
          await t.get(`${P}/products/no-such-product/position?address=nope`),
          404,
          "product_not_found",
        );
      });
      test("position works for every status", async () => {
        for (const slug of ["weth-ethereum-staked", "dai-optimism-legacy", "usdt-polygon-launch"]) {
          const res = await t.get(`${P}/products/${slug}/position?address=${WALLET}`);
          assert.equal(res.status, 200, `${slug}: ${res.text}`);
        }
      });
    });

    describe("yield-calc (CONTRACT §2, §3)", () => {
      test("the quote is the reference math, digit for digit", async () => {
        const res = await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=123456.789`);
        assert.equal(res.status, 200, res.text);
        const expected = quoteYield({
          amountUnits: 123456789000n,
          assetDecimals: 6,
          underlyingApyWad: 52300000000000000n,
          serviceFeeBps: 50,
          partnerFeeBps: 100,
        });
        // Published vector (shared/vectors/yield.json): 123456.789 USDC at 5.23 %, fees 50 + 100 bps.
        assert.deepEqual((json(res) as { data: unknown }).data, {
          principal: "123456.789",
          annual_yield: "6359.938213",
          monthly_yield: "517.877991",
          net_apy_for_user: "0.0515155",
        });
        assert.deepEqual((json(res) as { data: unknown }).data, expected);
      });
      test("results do not depend on how the amount was written", async () => {
        const a = await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=1.50`);
        const b = await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=1.5`);
        assert.equal(a.status, 200);
        assert.deepEqual((json(a) as { data: unknown }).data, (json(b) as { data: unknown }).data);
        assert.equal((json(a) as { data: { principal: string } }).data.principal, "1.5");
      });
      test("a loss-making product quotes a negative yield without fees", async () => {
        const res = await t.get(`${P}/products/eurc-base-drawdown/yield-calc?amount=1000`);
        assert.equal(res.status, 200);
        const data = (json(res) as { data: { annual_yield: string; net_apy_for_user: string } }).data;
        assert.equal(data.net_apy_for_user, "-0.0125");
        assert.equal(data.annual_yield, "-12.5");
      });
      test("malformed amounts → 400 invalid_amount saying which rule failed", async () => {
        const bad = [
          "1e3",
          "%2B1",
          "-1",
          "0",
          ".5",
          "5.",
          "%205",
          "0x10",
          "1,000",
          "NaN",
          "01",
          "%EF%BC%91",
          "",
          "1.1234567",
          "0.0000000",
        ];
        for (const amount of bad) {
          const body = expectProblem(
            await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=${amount}`),
            400,
            "invalid_amount",
          );
          assert.equal((body["errors"] as { pointer: string }[])[0]?.pointer, "/query/amount", amount);
        }
        const tooPrecise = expectProblem(
          await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=1.1234567`),
          400,
          "invalid_amount",
        );
        assert.match(String(tooPrecise["detail"]), /7 fractional digits.*6/);
        const huge = (2n ** 256n).toString();
        expectProblem(
          await t.get(`${P}/products/weth-ethereum-staked/yield-calc?amount=${huge}`),
          400,
          "invalid_amount",
        );
        expectProblem(await t.get(`${P}/products/usdc-base-prime/yield-calc`), 400, "invalid_amount");
        expectProblem(
          await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=1&amount=2`),
          400,
          "invalid_parameter",
        );
      });
      test("unknown query parameters are ignored, even malformed ones", async () => {
        const res = await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=10&foo=bar&foo=baz`);
        assert.equal(res.status, 200, res.text);
        assert.equal(
          (await t.get(`${P}/products/usdc-base-prime/yield-calc?foo=%zz&%zz=1&amount=1`)).status,
          200,
        );
        const bad = expectProblem(
          await t.get(`${P}/products/usdc-base-prime/yield-calc?amount=%zz`),
          400,
          "invalid_parameter",
        );
        assert.equal((bad["errors"] as { pointer: string }[])[0]?.pointer, "/query/amount");
      });
      test("paused and deprecated products → 409 product_not_active; no metrics → 409 metrics_unavailable", async () => {
        expectProblem(
          await t.get(`${P}/products/weth-ethereum-staked/yield-calc?amount=1`),
          409,
          "product_not_active",
        );
        expectProblem(
          await t.get(`${P}/products/dai-optimism-legacy/yield-calc?amount=1`),
          409,
          "product_not_active",
        );
        expectProblem(
          await t.get(`${P}/products/usdt-polygon-launch/yield-calc?amount=1`),
          409,
          "metrics_unavailable",
        );
      });
      test("the amount is checked against the product's decimals", async () => {
        assert.equal(
          (await t.get(`${P}/products/weth-ethereum-staked/yield-calc?amount=0.000000000000000001`)).status,
          409,
        );
        expectProblem(
          await t.get(`${P}/products/wbtc-arbitrum-core/yield-calc?amount=0.000000001`),
          400,
          "invalid_amount",
        );
        assert.equal(
          (await t.get(`${P}/products/wbtc-arbitrum-core/yield-calc?amount=0.00000001`)).status,
          200,
        );
      });
    });

    describe("events (CONTRACT §5)", () => {
      test("a new event is accepted with an integer id, duplicate false, and stored", async () => {
        const body = eventBody();
        const key = `acc-${crypto.randomUUID()}`;
        const res = await t.postEvent(body, { "idempotency-key": key });
        assert.equal(res.status, 200, res.text);
        const ack = json(res);
        assert.equal(ack["success"], true);
        assert.equal(ack["duplicate"], false);
        assert.ok(Number.isInteger(ack["event_id"]) && (ack["event_id"] as number) > 0);
        const stored = await t.api.events.find(DEMO.partnerId, "sandbox", key);
        assert.equal(stored?.id, ack["event_id"]);
        assert.equal(stored?.rawBody, body);
        assert.ok(res.headers["ratelimit"]);
      });
      test("the same request again → 200, same id, duplicate true, Idempotent-Replayed", async () => {
        const body = eventBody();
        const key = `dup-${crypto.randomUUID()}`;
        const first = json(await t.postEvent(body, { "idempotency-key": key }));
        const again = await t.postEvent(body, { "idempotency-key": key });
        assert.equal(again.status, 200);
        assert.deepEqual(json(again), { success: true, event_id: first["event_id"], duplicate: true });
        assert.equal(again.headers["idempotent-replayed"], "true");
      });
      test("a re-serialised retry (other key order and whitespace) is still a duplicate", async () => {
        const key = `reser-${crypto.randomUUID()}`;
        const body = eventBody({ data: { b: 1, a: [1, 2] } });
        const first = json(await t.postEvent(body, { "idempotency-key": key }));
        const parsed = JSON.parse(body) as Record<string, unknown>;
        const reserialised = JSON.stringify(
          { data: { a: [1, 2], b: 1 }, occurred_at: parsed["occurred_at"], event_type: parsed["event_type"] },
          null,
          2,
        );
        const again = await t.postEvent(reserialised, { "idempotency-key": key });
        assert.equal(again.status, 200, again.text);
        assert.deepEqual(json(again), { success: true, event_id: first["event_id"], duplicate: true });
      });
      test("the same key with another body → 422 idempotency_key_reused, nothing stored", async () => {
        const key = `reuse-${crypto.randomUUID()}`;
        const first = json(await t.postEvent(eventBody(), { "idempotency-key": key }));
        expectProblem(
          await t.postEvent(eventBody(), { "idempotency-key": key }),
          422,
          "idempotency_key_reused",
        );
        assert.equal((await t.api.events.find(DEMO.partnerId, "sandbox", key))?.id, first["event_id"]);
      });
      test("signatures: missing, malformed, short, wrong, tampered → 401 invalid_signature", async () => {
        const body = eventBody();
        const good = signBody(DEMO.signingSecret, new TextEncoder().encode(body));
        expectProblem(await t.postEvent(body, { "x-partner-signature": null }), 401, "invalid_signature");
        expectProblem(
          await t.postEvent(body, { "x-partner-signature": "zz".repeat(32) }),
          401,
          "invalid_signature",
        );
        expectProblem(
          await t.postEvent(body, { "x-partner-signature": good.slice(0, 62) }),
          401,
          "invalid_signature",
        );
        expectProblem(
          await t.postEvent(body, { "x-partner-signature": `${good}00` }),
          401,
          "invalid_signature",
        );
        expectProblem(
          await t.postEvent(body, { "x-partner-signature": "0".repeat(64) }),
          401,
          "invalid_signature",
        );
        expectProblem(
          await t.postEvent(`${body} `, { "x-partner-signature": good }),
          401,
          "invalid_signature",
        );
        const otherPartnerSig = signBody(DEMO.otherPartnerSigningSecret, new TextEncoder().encode(body));
        expectProblem(
          await t.postEvent(body, { "x-partner-signature": otherPartnerSig }),
          401,
          "invalid_signature",
        );
      });
      test("signatures: uppercase hex, a sha256= prefix and a rotated secret are accepted", async () => {
        const body = eventBody();
        const bytes = new TextEncoder().encode(body);
        assert.equal(
          (
            await t.postEvent(body, {
              "x-partner-signature": signBody(DEMO.signingSecret, bytes).toUpperCase(),
            })
          ).status,
          200,
        );
        const b2 = eventBody();
        assert.equal(
          (
            await t.postEvent(b2, {
              "x-partner-signature": `sha256=${signBody(DEMO.signingSecret, new TextEncoder().encode(b2))}`,
            })
          ).status,
          200,
        );
        const b3 = eventBody();
        assert.equal(
          (
            await t.postEvent(b3, {
              "x-partner-signature": signBody(DEMO.rotatedSigningSecret, new TextEncoder().encode(b3)),
            })
          ).status,
          200,
        );
      });
      test("the signature is over the raw bytes: non-ASCII bodies verify as sent", async () => {
        const body = eventBody({ data: { name: "Zoë 🚀", note: "\u00e9" } });
        const res = await t.postEvent(body);
        assert.equal(res.status, 200, res.text);
      });
      test("Idempotency-Key missing → 400 missing_idempotency_key; too long or not visible ASCII → 400 invalid_idempotency_key", async () => {
        expectProblem(
          await t.postEvent(eventBody(), { "idempotency-key": null }),
          400,
          "missing_idempotency_key",
        );
        expectProblem(
          await t.postEvent(eventBody(), { "idempotency-key": "k".repeat(256) }),
          400,
          "invalid_idempotency_key",
        );
        expectProblem(
          await t.postEvent(eventBody(), { "idempotency-key": "has space" }),
          400,
          "invalid_idempotency_key",
        );
        assert.equal((await t.postEvent(eventBody(), { "idempotency-key": "k".repeat(255) })).status, 200);
      });
      test("Content-Type must be application/json (charset utf-8 allowed) → else 415", async () => {
        expectProblem(
          await t.postEvent(eventBody(), { "content-type": "text/plain" }),
          415,
          "unsupported_media_type",
        );
        expectProblem(
          await t.postEvent(eventBody(), { "content-type": "application/json; charset=latin1" }),
          415,
          "unsupported_media_type",
        );
        expectProblem(
          await t.postEvent(eventBody(), { "content-type": null }),
          415,
          "unsupported_media_type",
        );
        assert.equal(
          (await t.postEvent(eventBody(), { "content-type": "application/json; charset=UTF-8" })).status,
          200,
        );
      });
      test("invalid JSON → 400 invalid_json", async () => {
        expectProblem(await t.postEvent("{not json"), 400, "invalid_json");
        expectProblem(await t.postEvent(""), 400, "invalid_json");
      });
      test("schema violations → 400 invalid_event with JSON pointers", async () => {
        const missing = expectProblem(
          await t.postEvent(JSON.stringify({ event_type: "partner.user.created", data: {} })),
          400,
          "invalid_event",
        );
        assert.ok(
          (missing["errors"] as { pointer: string }[]).some((e) => e.pointer === "/body/occurred_at"),
        );
        const unknown = expectProblem(await t.postEvent(eventBody({ extra: 1 })), 400, "invalid_event");
        assert.ok((unknown["errors"] as { pointer: string }[]).some((e) => e.pointer === "/body/extra"));
        expectProblem(
          await t.postEvent(eventBody({ event_type: "partner.user.deleted" })),
          400,
          "invalid_event",
        );
        expectProblem(
          await t.postEvent(eventBody({ occurred_at: "2026-11-20T10:15:00" })),
          400,
          "invalid_event",
        );
        expectProblem(await t.postEvent(eventBody({ occurred_at: "yesterday" })), 400, "invalid_event");
        expectProblem(await t.postEvent(eventBody({ data: [1] })), 400, "invalid_event");
        expectProblem(await t.postEvent("[1,2]"), 400, "invalid_event");
        let deep: unknown = {};
        for (let i = 0; i < 100; i++) deep = { d: deep };
        expectProblem(await t.postEvent(eventBody({ data: deep })), 400, "invalid_event");
      });
      test("numbers a JavaScript number cannot hold exactly → 400 invalid_event (no false duplicates)", async () => {
        for (const raw of ["12345678901234567891", "1e400", "0.12345678901234567", "-1e-320"]) {
          const body = `{"event_type":"partner.reconciliation.confirmed","occurred_at":"2026-11-20T10:15:00Z","data":{"amount":${raw}}}`;
          const problem = expectProblem(await t.postEvent(body), 400, "invalid_event");
          assert.match(String(problem["detail"]), /as strings/, raw);
        }
        for (const raw of ["9007199254740991", "0.1", "1e20", "-0.0", "123456789012345"]) {
          const body = `{"event_type":"partner.reconciliation.confirmed","occurred_at":"2026-11-20T10:15:00Z","data":{"amount":${raw},"s":"12345678901234567891"}}`;
          assert.equal((await t.postEvent(body)).status, 200, raw);
        }
      });
      test("occurred_at is RFC 3339: lowercase t/z and a leap second are accepted, impossible dates are not", async () => {
        for (const at of [
          "2026-11-20t10:15:00z",
          "2016-12-31T23:59:60Z",
          "2026-11-20T10:15:00.123456+05:30",
        ]) {
          assert.equal((await t.postEvent(eventBody({ occurred_at: at }))).status, 200, at);
        }
        for (const at of [
          "2026-02-29T10:15:00Z",
          "2026-11-20T24:00:00Z",
          "2026-11-20T10:15:00+24:00",
          "2026-11-20 10:15:00Z",
        ]) {
          expectProblem(await t.postEvent(eventBody({ occurred_at: at })), 400, "invalid_event");
        }
      });
      test("the event's data is stored exactly as parsed, __proto__ included", async () => {
        const key = `proto-${crypto.randomUUID()}`;
        const body =
          '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"__proto__":{"x":1},"b":2}}';
        assert.equal((await t.postEvent(body, { "idempotency-key": key })).status, 200);
        const stored = await t.api.events.find(DEMO.partnerId, "sandbox", key);
        assert.ok(stored !== undefined && Object.hasOwn(stored.data, "__proto__"));
        assert.equal(stored.data["b"], 2);
      });
      test("X-Partner-Event must equal event_type → 400 event_type_mismatch", async () => {
        expectProblem(
          await t.postEvent(eventBody(), { "x-partner-event": "partner.user.kyc_updated" }),
          400,
          "event_type_mismatch",
        );
        expectProblem(
          await t.postEvent(eventBody(), { "x-partner-event": null }),
          400,
          "event_type_mismatch",
        );
      });
      test("X-Partner-Event must equal event_type exactly (case included)", async () => {
        expectProblem(
          await t.postEvent(eventBody(), { "x-partner-event": "Partner.User.Created" }),
          400,
          "event_type_mismatch",
        );
      });
      test("a body over the limit → 413 payload_too_large", async () => {
        const big = eventBody({ data: { blob: "x".repeat(70_000) } });
        expectProblem(await t.postEvent(big), 413, "payload_too_large");
      });
      test("order of checks: auth → size → content type → signature → key → JSON → schema → header", async () => {
        const big = eventBody({ data: { blob: "x".repeat(70_000) } });
        expectProblem(await t.postEvent(big, { "x-api-key": null }), 401, "missing_api_key");
        expectProblem(
          await t.postEvent(big, { "content-type": "text/plain", "x-partner-signature": null }),
          413,
          "payload_too_large",
        );
        expectProblem(
          await t.postEvent(eventBody(), { "content-type": "text/plain", "x-partner-signature": null }),
          415,
          "unsupported_media_type",
        );
        expectProblem(
          await t.postEvent(eventBody(), { "x-partner-signature": null, "idempotency-key": null }),
          401,
          "invalid_signature",
        );
        expectProblem(
          await t.postEvent("{oops", { "idempotency-key": null }),
          400,
          "missing_idempotency_key",
        );
        expectProblem(await t.postEvent("{oops", { "x-partner-event": "nope" }), 400, "invalid_json");
        expectProblem(
          await t.postEvent(eventBody({ extra: true }), { "x-partner-event": "nope" }),
          400,
          "invalid_event",
        );
      });
      test("a refused request leaves no record: fixing it and resending with the same key is new", async () => {
        const key = `fix-${crypto.randomUUID()}`;
        const body = eventBody();
        expectProblem(
          await t.postEvent(body, { "idempotency-key": key, "x-partner-signature": "0".repeat(64) }),
          401,
          "invalid_signature",
        );
        expectProblem(
          await t.postEvent(body, { "idempotency-key": key, "x-partner-event": "partner.user.kyc_updated" }),
          400,
          "event_type_mismatch",
        );
        assert.equal(await t.api.events.find(DEMO.partnerId, "sandbox", key), undefined);
        const res = await t.postEvent(body, { "idempotency-key": key });
        assert.equal(json(res)["duplicate"], false);
      });
      test("idempotency keys are compared exactly: Key-A and key-A are two events", async () => {
        const suffix = crypto.randomUUID();
        const a = await t.postEvent(eventBody(), { "idempotency-key": `Key-A-${suffix}` });
        const b = await t.postEvent(eventBody(), { "idempotency-key": `key-A-${suffix}` });
        assert.equal(a.status, 200, a.text);
        assert.equal(b.status, 200, b.text);
        assert.equal(json(b)["duplicate"], false);
        assert.equal(
          (await t.api.events.find(DEMO.partnerId, "sandbox", `key-A-${suffix}`))?.id,
          json(b)["event_id"],
        );
      });
      test("idempotency is scoped per partner", async () => {
        const key = `scope-${crypto.randomUUID()}`;
        const body = eventBody();
        const a = json(await t.postEvent(body, { "idempotency-key": key }));
        const b = json(
          await t.postEvent(body, {
            "idempotency-key": key,
            "x-api-key": DEMO.otherPartnerSandboxApiKey,
            "x-partner-signature": signBody(DEMO.otherPartnerSigningSecret, new TextEncoder().encode(body)),
          }),
        );
        assert.equal(b["duplicate"], false);
        assert.notEqual(a["event_id"], b["event_id"]);
      });
      test("ids increase in acceptance order", async () => {
        const ids: number[] = [];
        for (let i = 0; i < 5; i++) ids.push(json(await t.postEvent(eventBody()))["event_id"] as number);
        assert.deepEqual(
          ids,
          [...ids].sort((x, y) => x - y),
        );
        assert.equal(new Set(ids).size, 5);
      });
      test("100 concurrent submissions of one key produce exactly one event", async () => {
        const key = `race-${crypto.randomUUID()}`;
        const body = eventBody();
        const results = await Promise.all(
          Array.from({ length: 100 }, () => t.postEvent(body, { "idempotency-key": key })),
        );
        assert.ok(
          results.every((r) => r.status === 200),
          results.map((r) => r.status).join(","),
        );
        const acks = results.map(json);
        assert.equal(new Set(acks.map((a) => a["event_id"])).size, 1);
        assert.equal(acks.filter((a) => a["duplicate"] === false).length, 1);
        const all = await t.api.events.list(0, 100_000);
        assert.equal(all.filter((e) => e.idempotencyKey === key).length, 1);
      });
    });

    describe("rate limits (CONTRACT §7)", () => {
      test("headers on every authenticated response, remaining decreases, 429 with Retry-After, refused not counted", async () => {
        const r = await start(mount, backend, {
          rateLimitOverride: undefined,
          rateLimiter: await newLimiter(),
        });
        try {
          const partner = (await loadSandbox().partners.getPartner(DEMO.otherPartnerId))!;
          assert.equal(partner.rateLimits, undefined); // Contoso uses the sandbox default of 100
          const key = DEMO.otherPartnerSandboxApiKey;
          for (let i = 0; i < 100; i++) {
            const res = await r.get(i % 2 === 0 ? `${P}/products` : `${P}/products/nope`, key);
            assert.equal(res.headers["ratelimit-policy"], '"sandbox";q=100;w=60');
            const m = /^"sandbox";r=(\d+);t=(\d+)$/.exec(res.headers["ratelimit"] ?? "");
            assert.ok(m, res.headers["ratelimit"]);
            assert.equal(Number(m[1]), 99 - i);
            assert.ok(Number(m[2]) >= 1 && Number(m[2]) <= 60);
          }
          for (let i = 0; i < 3; i++) {
            const res = await r.get(`${P}/products`, key);
            expectProblem(res, 429, "rate_limited");
            const retry = Number(res.headers["retry-after"]);
            const t429 = Number(/;t=(\d+)$/.exec(res.headers["ratelimit"] ?? "")?.[1]);
            assert.ok(retry >= 1 && retry <= 60);
            assert.ok(retry >= t429);
            assert.match(res.headers["ratelimit"] ?? "", /;r=0;/);
          }
          // Another partner is unaffected.
          assert.equal((await r.get(`${P}/products`)).status, 200);
        } finally {
          await r.close();
        }
      });
      test("unauthenticated responses carry no RateLimit headers", async () => {
        const res = await t.get(`${P}/products`, null);
        assert.equal(res.headers["ratelimit"], undefined);
      });
      test("the failed-authentication limit per client address answers 429 after 30 failures", async () => {
        const r = await start(mount, backend);
        try {
          for (let i = 0; i < 30; i++)
            expectProblem(await r.get(`${P}/products`, generateApiKey("sandbox")), 401, "invalid_api_key");
          const blocked = expectProblem(
            await r.get(`${P}/products`, generateApiKey("sandbox")),
            429,
            "rate_limited",
          );
          assert.match(String(blocked["detail"]), /failed authentication/);
          // Once blocked, even a valid key from that address waits: guessing learns nothing.
          const res = await r.get(`${P}/products`);
          expectProblem(res, 429, "rate_limited");
          assert.ok(Number(res.headers["retry-after"]) >= 1);
        } finally {
          await r.close();
        }
      });
    });

    describe("rate limits: gaps found by mutation testing", () => {
      test("wrong-environment keys count as failed authentications; a missing key does not", async () => {
        const r = await start(mount, backend);
        try {
          for (let i = 0; i < 40; i++)
            expectProblem(await r.get(`${P}/products`, null), 401, "missing_api_key");
          for (let i = 0; i < 30; i++)
            expectProblem(await r.get(`${P}/products`, DEMO.productionApiKey), 401, "wrong_environment");
          expectProblem(await r.get(`${P}/products`, DEMO.productionApiKey), 429, "rate_limited");
        } finally {
          await r.close();
        }
      });
      test("concurrent guesses that all pass the pre-check: only 30 are answered 401", async () => {
        const r = await start(mount, backend);
        try {
          const results = await Promise.all(
            Array.from({ length: 40 }, () => r.get(`${P}/products`, "not-a-key")),
          );
          const statuses = results.map((x) => x.status);
          assert.equal(statuses.filter((s) => s === 401).length, 30, statuses.join(","));
          assert.equal(statuses.filter((s) => s === 429).length, 10, statuses.join(","));
        } finally {
          await r.close();
        }
      });
      test("the quota is per partner AND environment, even with a shared limiter", async () => {
        const shared = await newLimiter();
        const sandbox = await start(mount, backend, { rateLimiter: shared, rateLimitOverride: 2 });
        const production = await start(mount, backend, {
          environment: "production",
          rateLimiter: shared,
          rateLimitOverride: 2,
        });
        try {
          for (let i = 0; i < 2; i++) assert.equal((await sandbox.get(`${P}/products`)).status, 200);
          expectProblem(await sandbox.get(`${P}/products`), 429, "rate_limited");
          const prod = await production.get(`${P}/products`, DEMO.productionApiKey);
          assert.equal(prod.status, 200, prod.text);
          assert.equal(
            prod.headers["ratelimit"]?.startsWith('"production";r=1;'),
            true,
            prod.headers["ratelimit"],
          );
        } finally {
          await sandbox.close();
          await production.close();
        }
      });
    });

    describe("failures of backing services (CONTRACT §6)", () => {
      test("a store that is down → 503 service_unavailable with Retry-After, not 500", async () => {
        const down: EventStore = Object.assign(new MemoryEventStore(), {
          append: () => Promise.reject(new StoreUnavailableError("event store down", 3)),
        });
        const r = await start(mount, backend, { events: down });
        try {
          const res = await r.postEvent(eventBody());
          expectProblem(res, 503, "service_unavailable");
          assert.equal(res.headers["retry-after"], "3");
        } finally {
          await r.close();
        }
      });
      test("an unexpected error → 500 internal_error without details", async () => {
        const errors: unknown[] = [];
        const data = loadSandbox();
        const r = await start(mount, backend, {
          products: {
            ...data.products,
            listProducts: () => Promise.reject(new Error("boom at line 42")),
            getProduct: data.products.getProduct.bind(data.products),
          },
          onError: (e) => errors.push(e),
        });
        try {
          const res = await r.get(`${P}/products`);
          const body = expectProblem(res, 500, "internal_error");
          assert.ok(!JSON.stringify(body).includes("boom"));
          assert.equal(errors.length, 1);
        } finally {
          await r.close();
        }
      });
    });
  });
}
