/**
 * No input, however malformed, produces a 500 (CONTRACT §6): fast-check throws arbitrary methods,
 * paths, query strings, headers and bodies at `handle()` and checks every answer is a well-formed
 * success or problem with a status below 500, and a code the route table lists for the route.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { DEFAULT_BASE_PATH } from "../../src/http/base-path.js";
import { ApiError } from "../../src/http/errors.js";
import { createRouter } from "../../src/http/router.js";
import { ROUTES, routeErrorCodes } from "../../src/http/routes.js";
import { createPartnerApi, Problem, signBody } from "../../src/index.js";
import { fcParams } from "../../src/testing/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const api = createPartnerApi({
  environment: "sandbox",
  ...loadSandbox(),
  rateLimitOverride: 1_000_000_000,
  failedAuthPerMinute: 1_000_000_000,
  onError: (error) => {
    throw error;
  },
});

const router = createRouter(ROUTES, DEFAULT_BASE_PATH);

/** The codes the table allows for this method and path: the route's, or the router's refusal. */
function allowedCodes(method: string, path: string): readonly string[] {
  try {
    return routeErrorCodes(router.match(method, path).route);
  } catch (error) {
    if (error instanceof ApiError) return [error.code];
    throw error;
  }
}

const pieces = fc.oneof(
  fc.constantFrom(
    "api",
    "partner",
    "products",
    "position",
    "yield-calc",
    "webhooks",
    "inbound",
    "usdc-base-prime",
    "weth-ethereum-staked",
    "usdt-polygon-launch",
    "",
    "..",
    "%00",
    "%zz",
    "openapi.json",
  ),
  fc.string({ unit: "binary", maxLength: 12 }),
);
const path = fc.oneof(
  fc.array(pieces, { maxLength: 6 }).map((parts) => `/${parts.join("/")}`),
  fc.array(pieces, { maxLength: 2 }).map((parts) => `/api/partner/products/${parts.join("/")}`),
  fc.constantFrom(
    "/api/partner/products/usdc-base-prime/yield-calc",
    "/api/partner/products/usdc-base-prime/position",
    "/api/partner/webhooks/inbound",
  ),
);
const value = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "1",
    "1.5",
    "0",
    "-1",
    "1e3",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "%",
    "%zz",
    "115792089237316195423570985008687907853269984665640564039457584007913129639936",
  ),
  fc.bigInt({ min: 0n, max: 2n ** 300n }).map(String),
);
const query = fc
  .tuple(
    fc.array(fc.tuple(fc.constantFrom("amount", "address", "x", "amount[]", ""), value), { maxLength: 4 }),
    fc.constantFrom("&", "&&", ";"),
  )
  .map(([pairs, separator]) => pairs.map(([k, v]) => `${k}=${v}`).join(separator));
const body = fc.oneof(
  fc.json(),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc
    .record({
      event_type: fc.oneof(
        fc.constantFrom("partner.user.created", "partner.reconciliation.confirmed"),
        fc.string(),
      ),
      occurred_at: fc.oneof(fc.constant("2026-11-20T10:15:00Z"), fc.string()),
      data: fc.anything(),
    })
    .map((o) => JSON.stringify(o) ?? "null"),
  fc.uint8Array({ maxLength: 200 }).map((b) => new TextDecoder().decode(b)),
);

test("property: handle() never answers 5xx and always answers a well-formed body", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "get", "PATCH", "TRACE"),
      path,
      query,
      fc.option(fc.constantFrom(DEMO.sandboxApiKey, DEMO.productionApiKey, "ypk_test_", "x"), {
        nil: undefined,
      }),
      body,
      fc.record({
        "content-type": fc.option(
          fc.constantFrom("application/json", "text/plain", "application/json; charset=utf-8", ""),
          { nil: undefined },
        ),
        "x-partner-event": fc.option(fc.constantFrom("partner.user.created", "x"), { nil: undefined }),
        "idempotency-key": fc.option(
          fc.oneof(fc.string({ unit: "binary", maxLength: 300 }), fc.constant("k1")),
          { nil: undefined },
        ),
        sign: fc.boolean(),
      }),
      async (method, p, q, key, text, h) => {
        const bytes = new TextEncoder().encode(text);
        const headers: Record<string, string | undefined> = {
          "x-api-key": key,
          "content-type": h["content-type"],
          "x-partner-event": h["x-partner-event"],
          "idempotency-key": h["idempotency-key"],
          "x-partner-signature": h.sign ? signBody(DEMO.signingSecret, bytes) : undefined,
        };
        const res = await api.handle({
          method,
          path: p,
          query: q,
          headers,
          body: bytes,
          clientAddress: "192.0.2.1",
        });
        assert.ok(res.status < 500, `${method} ${p}?${q} → ${res.status} ${res.body}`);
        assert.ok(res.headers["x-request-id"]);
        if (res.body !== null) {
          const parsed = JSON.parse(res.body) as { success: boolean };
          if (res.status >= 400) {
            const { code } = Problem.parse(parsed);
            const allowed = allowedCodes(method, p);
            assert.ok(
              allowed.includes(code),
              `${method} ${p} → ${code}, not in its table: ${allowed.join(", ")}`,
            );
          } else assert.equal(parsed.success, true);
        }
      },
    ),
    { ...fcParams(process.env), numRuns: Number(process.env["FC_NUM_RUNS"] ?? 1000) },
  );
});
