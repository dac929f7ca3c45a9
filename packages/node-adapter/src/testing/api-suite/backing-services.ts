/**
 * The API suite, failures of backing services (CONTRACT §6): a store that is down or a missing USD
 * price is a 503 with Retry-After, anything unexpected a 500 without details, and every 5xx
 * reaches `onError` with its cause and the status it was answered with. See index.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type ErrorAnswer,
  type EventStore,
  MemoryEventStore,
  StoreUnavailableError,
} from "@partner-yield/core";
import { eventBody, expectProblem, loadSandbox, P, type SuiteContext, WALLET } from "./target.js";

interface Reported {
  readonly error: unknown;
  readonly requestId: string;
  readonly answer: ErrorAnswer;
}

export function backingServicesSuite(suite: SuiteContext): void {
  describe("failures of backing services (CONTRACT §6)", () => {
    test("a store that is down → 503 service_unavailable with Retry-After, reported to onError with its cause", async () => {
      const reported: Reported[] = [];
      const cause = new Error("connect ECONNREFUSED 127.0.0.1:5432");
      const down: EventStore = Object.assign(new MemoryEventStore(), {
        append: () => Promise.reject(new StoreUnavailableError("event store down", 3, { cause })),
      });
      const r = await suite.start({
        events: down,
        onError: (error, requestId, answer) => reported.push({ error, requestId, answer }),
      });
      try {
        const res = await r.postEvent(eventBody());
        const body = expectProblem(res, 503, "service_unavailable");
        assert.equal(res.headers["retry-after"], "3");
        assert.ok(!JSON.stringify(body).includes("ECONNREFUSED"), "the client sees no cause");
        assert.equal(reported.length, 1);
        assert.deepEqual(reported[0]!.answer, { status: 503, code: "service_unavailable" });
        assert.equal(reported[0]!.requestId, res.headers["x-request-id"]);
        assert.ok(reported[0]!.error instanceof StoreUnavailableError);
        assert.equal((reported[0]!.error as Error).cause, cause);
      } finally {
        await r.close();
      }
    });

    test("a position whose asset has no USD price → 503, reported to onError naming the asset", async () => {
      const reported: Reported[] = [];
      const r = await suite.start({
        prices: { getUsdPriceWad: () => Promise.resolve(undefined) },
        onError: (error, requestId, answer) => reported.push({ error, requestId, answer }),
      });
      try {
        const res = await r.get(`${P}/products/usdc-base-prime/position?address=${WALLET}`);
        expectProblem(res, 503, "service_unavailable");
        assert.equal(reported.length, 1);
        assert.equal(reported[0]!.answer.status, 503);
        assert.match(String(reported[0]!.error), /no USD price is available for USDC/);
      } finally {
        await r.close();
      }
    });

    test("a refusal of the client's own making (4xx) is not reported", async () => {
      const reported: Reported[] = [];
      const r = await suite.start({
        onError: (error, requestId, answer) => reported.push({ error, requestId, answer }),
      });
      try {
        expectProblem(await r.get(`${P}/products/no-such-product`), 404, "product_not_found");
        expectProblem(await r.get(`${P}/products`, null), 401, "missing_api_key");
        assert.deepEqual(reported, []);
      } finally {
        await r.close();
      }
    });

    test("an unexpected error → 500 internal_error without details, reported to onError", async () => {
      const reported: Reported[] = [];
      const data = loadSandbox();
      const r = await suite.start({
        products: {
          ...data.products,
          listProducts: () => Promise.reject(new Error("boom at line 42")),
          getProduct: data.products.getProduct.bind(data.products),
        },
        onError: (error, requestId, answer) => reported.push({ error, requestId, answer }),
      });
      try {
        const res = await r.get(`${P}/products`);
        const body = expectProblem(res, 500, "internal_error");
        assert.ok(!JSON.stringify(body).includes("boom"));
        assert.equal(reported.length, 1);
        assert.deepEqual(reported[0]!.answer, { status: 500, code: "internal_error" });
        assert.equal(reported[0]!.requestId, res.headers["x-request-id"]);
        assert.match(String(reported[0]!.error), /boom at line 42/);
      } finally {
        await r.close();
      }
    });
  });
}
