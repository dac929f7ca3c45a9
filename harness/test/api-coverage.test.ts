/**
 * The pieces of `properties --base-url` that decide what counts: answers sorted into figures,
 * refusals (a discard) and broken answers (a failure: 5xx, none, unreadable); amount classes; the
 * cases made on purpose so that every class of input is exercised whatever the seed; and a
 * deployment that never answers large amounts (a timeout) fails, never discards.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { ListedProduct } from "../src/checks/context.js";
import type { HandlerWrapper } from "../src/faults/server.js";
import type { Exchange } from "../src/http/client.js";
import { main } from "../src/main.js";
import {
  AMOUNT_CLASSES,
  amountClass,
  classCases,
  coveringOrder,
  productClasses,
} from "../src/properties/api-properties.js";
import { classifyAnswer } from "../src/properties/api-target.js";
import { captureIo } from "./support/io.js";
import { startTarget } from "./support/targets.js";

function exchange(response: { status: number; text: string } | undefined, error?: string): Exchange {
  return {
    seq: 1,
    checkId: "PROPERTIES",
    request: { method: "GET", url: "http://127.0.0.1/x", headers: {} },
    response: response === undefined ? undefined : { ...response, headers: {}, bytes: response.text.length },
    error,
    attempts: 1,
    durationMs: 1,
  } as unknown as Exchange;
}

function product(slug: string, decimals: number, status = "active", net = "0.05"): ListedProduct {
  return {
    slug,
    status,
    assetDecimals: decimals,
    assetSymbol: "X",
    serviceFeeBps: 0,
    partnerFeeBps: 0,
    metrics: { net_apy_for_user: net, underlying_apy: net },
    raw: {},
  };
}

describe("answers: figures, refusals and broken answers", () => {
  test("a 5xx, no answer (reset, timeout) and an unreadable 200 are broken; a 4xx is a refusal", () => {
    assert.ok("broken" in classifyAnswer(exchange({ status: 500, text: "oops" })));
    assert.ok("broken" in classifyAnswer(exchange({ status: 503, text: "" })));
    const reset = classifyAnswer(exchange(undefined, "socket hang up (ECONNRESET)"));
    assert.ok("broken" in reset && /ECONNRESET/.test(reset.broken));
    const timeout = classifyAnswer(exchange(undefined, "no answer within --timeout 200 ms"));
    assert.ok("broken" in timeout && /--timeout/.test(timeout.broken));
    assert.ok("broken" in classifyAnswer(exchange({ status: 200, text: "<html>" })));
    assert.ok("broken" in classifyAnswer(exchange({ status: 200, text: '{"success":true}' })));
    const refused = classifyAnswer(exchange({ status: 400, text: '{"success":false}' }));
    assert.ok("refused" in refused && refused.status === 400);
    assert.ok("data" in classifyAnswer(exchange({ status: 200, text: '{"success":true,"data":{"a":"1"}}' })));
  });
});

describe("classes of input", () => {
  test("amount classes", () => {
    assert.equal(amountClass(0n, 6), "zero");
    assert.equal(amountClass(1n, 6), "one unit");
    assert.equal(amountClass(1_999_999n, 6), "max precision");
    assert.equal(amountClass(1_000_000_000n, 6), "everyday");
    assert.equal(amountClass(7n, 0), "everyday");
    assert.equal(amountClass(10n ** 40n, 18), "huge");
  });

  test("property: the cases made on purpose cover every amount class and every product class, for any product list", () => {
    const listed = fc
      .array(
        fc.record({
          decimals: fc.constantFrom(0, 2, 6, 8, 18),
          loss: fc.boolean(),
        }),
        { minLength: 1, maxLength: 8 },
      )
      .map((rows) => rows.map((r, i) => product(`p${i}`, r.decimals, "active", r.loss ? "-0.01" : "0.05")));
    fc.assert(
      fc.property(listed, fc.integer({ min: 1, max: 3 }), (products, rounds) => {
        const cases = classCases(products, rounds);
        const amounts = new Map<string, number>();
        const kinds = new Map<string, number>();
        for (const c of cases) {
          const cls = amountClass(c.p1, c.product.assetDecimals!);
          amounts.set(cls, (amounts.get(cls) ?? 0) + 1);
          for (const k of productClasses(c.product)) kinds.set(k, (kinds.get(k) ?? 0) + 1);
          assert.ok(c.p1 + c.p2 <= 2n ** 256n - 1n, "P₁ + P₂ is still a valid amount");
        }
        const fractional = products.some((p) => (p.assetDecimals ?? 0) > 0);
        for (const cls of AMOUNT_CLASSES) {
          if (cls === "max precision" && !fractional) continue;
          assert.ok((amounts.get(cls) ?? 0) >= rounds, `${cls}: ${amounts.get(cls)} < ${rounds}`);
        }
        for (const k of new Set(products.flatMap(productClasses)))
          assert.ok((kinds.get(k) ?? 0) >= rounds, `${k}: ${kinds.get(k)} < ${rounds}`);
      }),
    );
  });

  test("positions read every kind of product first", () => {
    const list = [
      product("a", 6),
      product("b", 6),
      product("c", 18, "paused"),
      product("d", 6, "deprecated"),
      product("e", 8),
    ];
    assert.deepEqual(
      coveringOrder(list)
        .slice(0, 4)
        .map((p) => p.slug),
      ["a", "c", "d", "e"],
    );
  });
});

describe("properties --base-url against a deployment that never answers large amounts", () => {
  test("the timeout fails the property with its curl, never a discard", async () => {
    const silent: HandlerWrapper = {
      wrap: (api) => ({
        handle(req) {
          const amount = /(?:^|&)amount=([0-9.]+)/.exec(req.query ?? "")?.[1] ?? "";
          if (!req.path.endsWith("/yield-calc") || (amount.split(".")[0] ?? "").length < 25)
            return api.handle(req);
          // Answers long after the client's --timeout (never: the server could not close at the end).
          return new Promise((resolve) => setTimeout(() => resolve(api.handle(req)), 1500));
        },
      }),
    };
    const target = await startTarget(silent);
    try {
      const captured = captureIo({ PARTNER_API_KEY: target.apiKey });
      const code = await main(
        [
          "properties",
          "--base-url",
          target.baseUrl,
          "--rpm",
          "6000",
          "--only",
          "P-06",
          "--timeout",
          "300",
          "--max-requests",
          "55",
        ],
        captured.io,
      );
      const out = captured.out.stdout;
      assert.equal(code, 1, out);
      assert.match(out, /^✖ P-06 /m);
      assert.match(out, /error: a valid amount got no answer/);
      assert.match(out, /curl -sS -i '[^']*yield-calc\?amount=[0-9]{25,}/);
    } finally {
      await target.close();
    }
  });
});
