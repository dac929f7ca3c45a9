/**
 * Every route answers what the route table says: its success (validated against the table's
 * schema), HEAD for GET, 405 with the table's Allow for any other method, and EACH error code the
 * table lists for it, provoked for real. A code listed but not reachable, or a route the cases
 * below do not cover, fails. Run at the default base path and at another one.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import { DEFAULT_BASE_PATH } from "../../src/http/base-path.js";
import { ERRORS, type ErrorCode } from "../../src/http/errors.js";
import { ROUTES, type Route, routeErrorCodes } from "../../src/http/routes.js";
import {
  createPartnerApi,
  InvalidBodyError,
  MemoryEventStore,
  type PartnerApiOptions,
  type PlainRequest,
  type PlainResponse,
  Problem,
  StoreUnavailableError,
  signBody,
} from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const WALLET = DEMO.walletWithPositions;
const encoder = new TextEncoder();

/** What a request to a route may vary; the rest is a valid request by default. */
interface Variation {
  readonly slug?: string;
  /** The whole path, instead of the route's under the base path. */
  readonly path?: string;
  readonly query?: string;
  readonly method?: string;
  readonly headers?: Record<string, string | undefined>;
  readonly body?: PlainRequest["body"] | string;
  readonly options?: Partial<PartnerApiOptions>;
}

const VALID_QUERY: Readonly<Record<string, string>> = {
  getPosition: `address=${WALLET}`,
  calculateYield: "amount=1000",
};

function eventBody(eventType = "partner.user.created"): string {
  return JSON.stringify({ event_type: eventType, occurred_at: "2026-11-20T10:15:00Z", data: { n: 1 } });
}

function signedHeaders(body: string | Uint8Array): Record<string, string> {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  return {
    "content-type": "application/json",
    "x-partner-event": "partner.user.created",
    "x-partner-signature": signBody(DEMO.signingSecret, bytes),
    "idempotency-key": `k-${crypto.randomUUID()}`,
  };
}

function callRoute(basePath: string, route: Route, variation: Variation = {}): Promise<PlainResponse> {
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadSandbox(),
    basePath,
    rateLimitOverride: 1_000_000,
    ...variation.options,
  });
  const body = variation.body ?? (route.method === "POST" ? eventBody() : undefined);
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const defaults: Record<string, string | undefined> = {
    "x-api-key": DEMO.sandboxApiKey,
    ...(route.method === "POST" && bytes instanceof Uint8Array ? signedHeaders(bytes) : {}),
  };
  const headers = Object.fromEntries(
    Object.entries({ ...defaults, ...variation.headers }).filter(([, v]) => v !== undefined),
  );
  return api.handle({
    method: variation.method ?? route.method,
    path: variation.path ?? basePath + route.path.replace("{slug}", variation.slug ?? "usdc-base-prime"),
    query: variation.query ?? VALID_QUERY[route.operationId] ?? "",
    headers,
    body: bytes,
    clientAddress: "198.51.100.20",
  });
}

const failing = (error: unknown): Partial<PartnerApiOptions> => {
  const data = loadSandbox();
  return { keys: { findByHash: () => Promise.reject(error), close: () => data.keys.close() } };
};

/** How to make a route answer a code; a function of the route where the way differs by route. */
type Provocation = (route: Route) => Variation | Promise<Variation>;

const PROVOKE: Readonly<Partial<Record<ErrorCode, Provocation>>> = {
  missing_api_key: () => ({ headers: { "x-api-key": undefined } }),
  invalid_api_key: () => ({ headers: { "x-api-key": "ypk_test_nope" } }),
  wrong_environment: () => ({ headers: { "x-api-key": DEMO.productionApiKey } }),
  rate_limited: () => ({ options: { rateLimitOverride: 0 } }),
  internal_error: () => ({ options: failing(new TypeError("a bug")) }),
  service_unavailable: () => ({ options: failing(new StoreUnavailableError("key store down", 2)) }),
  product_not_found: () => ({ slug: "no-such-product" }),
  invalid_parameter: (route) => ({
    query: `${VALID_QUERY[route.operationId]}&${VALID_QUERY[route.operationId]}`,
  }),
  invalid_address: () => ({ query: "address=0x1234" }),
  invalid_amount: () => ({ query: "amount=1e3" }),
  product_not_active: () => ({ slug: "weth-ethereum-staked" }),
  metrics_unavailable: () => ({ slug: "usdt-polygon-launch" }),
  invalid_body: () => ({
    body: () => Promise.reject(new InvalidBodyError("the client sent fewer bytes than Content-Length")),
  }),
  payload_too_large: () => ({ options: { bodyLimitBytes: 10 } }),
  unsupported_media_type: () => ({ headers: { "content-type": "text/plain" } }),
  invalid_signature: () => ({ headers: { "x-partner-signature": "0".repeat(64) } }),
  missing_idempotency_key: () => ({ headers: { "idempotency-key": undefined } }),
  invalid_idempotency_key: () => ({ headers: { "idempotency-key": "a key with spaces" } }),
  invalid_json: () => {
    const body = "{not json";
    return { body, headers: signedHeaders(body) };
  },
  invalid_event: () => {
    const body = JSON.stringify({ event_type: "partner.user.created", occurred_at: "yesterday", data: {} });
    return { body, headers: signedHeaders(body) };
  },
  event_type_mismatch: () => ({ headers: { "x-partner-event": "partner.user.kyc_updated" } }),
  idempotency_in_progress: () => {
    const events = Object.assign(new MemoryEventStore(), {
      append: () => Promise.resolve({ status: "in_progress" as const }),
    });
    return { options: { events } };
  },
  // A store at its bound (issue 10): the in-memory one with room for no event.
  event_store_full: () => ({ options: { events: new MemoryEventStore({ maxEventBytes: 1 }) } }),
  idempotency_key_reused: () => {
    const events = Object.assign(new MemoryEventStore(), {
      append: (event: Parameters<MemoryEventStore["append"]>[0]) =>
        Promise.resolve({ status: "conflict" as const, event: { ...event, id: 1, fingerprint: "other" } }),
    });
    return { options: { events } };
  },
};

function problemCode(res: PlainResponse): string {
  assert.match(res.headers["content-type"] ?? "", /^application\/problem\+json/);
  return Problem.parse(JSON.parse(res.body ?? "null")).code;
}

for (const basePath of [DEFAULT_BASE_PATH, "/v1/partner"]) {
  describe(`every route answers what ROUTES says (base path ${basePath})`, () => {
    for (const route of ROUTES) {
      const name = `${route.method} ${route.path} (${route.operationId})`;

      test(`${name}: 200 matching the success schema`, async () => {
        const res = await callRoute(basePath, route);
        assert.equal(res.status, 200, res.body ?? "");
        assert.match(res.headers["content-type"] ?? "", /^application\/json; charset=utf-8$/);
        const body = JSON.parse(res.body!) as unknown;
        if (route.success.schema instanceof z.ZodType) route.success.schema.parse(body);
        else assert.equal(typeof body, "object");
        if (route.access === "partner") assert.ok(res.headers["ratelimit"], "partner routes carry RateLimit");
        else assert.equal(res.headers["ratelimit"], undefined);
      });

      test(`${name}: other methods are 405 with the table's Allow`, async () => {
        const allow = route.method === "GET" ? "GET, HEAD" : route.method;
        for (const method of ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
          if (allow.split(", ").includes(method)) continue;
          const res = await callRoute(basePath, route, { method });
          assert.equal(res.status, 405, `${method}: ${res.body}`);
          assert.equal(res.headers["allow"], allow);
          if (method !== "HEAD") assert.equal(problemCode(res), "method_not_allowed");
        }
        if (route.method === "GET") {
          const head = await callRoute(basePath, route, { method: "HEAD" });
          assert.equal(head.status, 200);
          assert.equal(head.body, null);
        }
      });

      for (const code of routeErrorCodes(route)) {
        test(`${name}: answers ${code}`, async () => {
          const provoke = PROVOKE[code];
          assert.ok(provoke, `no case provokes ${code}: add one to PROVOKE`);
          const variation = await provoke(route);
          const res = await callRoute(basePath, route, variation);
          assert.equal(problemCode(res), code, res.body ?? "");
          assert.equal(res.status, Problem.parse(JSON.parse(res.body!)).status);
        });
      }
    }

    test("a path outside the base path, or under it but unknown, is 404 not_found", async () => {
      const list = ROUTES.find((r) => r.operationId === "listProducts")!;
      const elsewhere = basePath === DEFAULT_BASE_PATH ? "/v1/partner" : DEFAULT_BASE_PATH;
      for (const path of [
        `${elsewhere}/products`,
        `${basePath}/nothing-here`,
        `${basePath}/products/`,
        basePath,
      ]) {
        const res = await callRoute(basePath, list, { path });
        assert.equal(res.status, 404, path);
        assert.equal(problemCode(res), "not_found", path);
      }
    });
  });
}

test("each error code of the table is answered by some route, or by routing or transport", () => {
  const answered = new Set<string>(ROUTES.flatMap((r) => routeErrorCodes(r)));
  const elsewhere = ["not_found", "method_not_allowed", "request_timeout", "headers_too_large"];
  for (const code of Object.keys(ERRORS)) {
    assert.ok(answered.has(code) || elsewhere.includes(code), `${code} is answered by no route`);
  }
});
