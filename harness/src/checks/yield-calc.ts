/**
 * The yield calculator (interface.md §4.4; CONTRACT §2, §3). At level `spec` the answers must be
 * consistent with themselves and the product, to the precision they are written in; at
 * `reference` they must equal the harness's own oracle digit for digit, for seeded random amounts.
 * @module
 */
import fc from "fast-check";
import type { Exchange } from "../http/client.js";
import { fromBaseUnits, MAX_BASE_UNITS } from "../oracle/decimal.js";
import { expectedQuote } from "../oracle/yield.js";
import { missingSlug } from "./auth.js";
import { contract, decision, GAPS, spec } from "./citations.js";
import {
  type CheckContext,
  isRecord,
  isRefusal,
  type ListedProduct,
  productPath,
  yieldPath,
} from "./context.js";
import {
  add,
  compareScaled,
  distance,
  isDecimalText,
  multiply,
  type Scaled,
  times,
  toScaled,
  writtenUnit,
} from "./decimal-text.js";
import type { CheckDefinition } from "./definition.js";
import { sortedJson } from "./json-text.js";
import { failOnWrong, type WrongFigure } from "./wrong.js";

const YIELD_FIELDS = ["principal", "annual_yield", "monthly_yield", "net_apy_for_user"] as const;

/** Active products with metrics and known decimals: the ones a quote can be asked for. */
export function quotable(t: CheckContext): ListedProduct[] {
  const list = t
    .products()
    .filter(
      (p) =>
        p.status === "active" &&
        isRecord(p.metrics) &&
        p.assetDecimals !== undefined &&
        isDecimalText(p.metrics["net_apy_for_user"]),
    );
  if (list.length === 0) t.skip("the target lists no active product with metrics");
  // One product per distinct decimals first, so 6, 8 and 18 all get exercised.
  const seen = new Set<number>();
  const first = list.filter((p) => !seen.has(p.assetDecimals!) && seen.add(p.assetDecimals!));
  return [...first, ...list.filter((p) => !first.includes(p))];
}

/**
 * Seeded amounts in base units for a product with `decimals`: mostly everyday sizes, some dust,
 * some huge (up to 2^256 − 1 base units when `huge`).
 */
export function amountArbitrary(decimals: number, huge: boolean): fc.Arbitrary<bigint> {
  const one = 10n ** BigInt(decimals);
  const parts: Array<{ arbitrary: fc.Arbitrary<bigint>; weight: number }> = [
    { arbitrary: fc.bigInt({ min: 1n, max: one * 1_000_000n }), weight: 6 },
    { arbitrary: fc.bigInt({ min: 1n, max: one }), weight: 2 },
  ];
  if (huge) parts.push({ arbitrary: fc.bigInt({ min: 1n, max: MAX_BASE_UNITS }), weight: 1 });
  return fc.oneof(...parts);
}

interface Quote {
  readonly product: ListedProduct;
  readonly amount: string;
  readonly ex: Exchange;
  readonly data: Record<string, unknown>;
}

/**
 * Asks for a quote. At level `spec` the bounds on `amount` are not shown (interface.md §8), so a
 * refused amount gives `undefined` and a note; at `reference` every amount sent here must be quoted.
 */
async function requestQuote(
  t: CheckContext,
  product: ListedProduct,
  amount: string,
): Promise<Quote | undefined> {
  const ex = await t.get(yieldPath(product.slug, amount));
  if (!t.reference && isRefusal(ex)) {
    t.note(
      `${product.slug}: amount ${amount} refused (HTTP ${ex.response?.status}; bounds on amount are not shown)`,
    );
    return undefined;
  }
  const body = t.expectOk(ex, `yield-calc of ${amount} in ${product.slug}`);
  const data = body["data"];
  t.checkWith(
    "schema",
    isRecord(data),
    `yield-calc of ${amount} in ${product.slug}: "data" is not an object`,
    ex,
  );
  return { product, amount, ex, data };
}

/** Samples (product, amount) pairs round-robin over the quotable products. */
function samplePairs(t: CheckContext, count: number, huge: boolean): Array<[ListedProduct, string]> {
  const products = quotable(t);
  const pairs: Array<[ListedProduct, string]> = [];
  for (let i = 0; i < count; i++) {
    const product = products[i % products.length]!;
    const d = product.assetDecimals!;
    const [units] = t.sample(amountArbitrary(d, huge), 1, i);
    pairs.push([product, fromBaseUnits(units!, d)]);
  }
  return pairs;
}

function scaledField(t: CheckContext, q: Quote, field: string): Scaled {
  const value = q.data[field];
  t.checkWith(
    "schema",
    isDecimalText(value),
    `${q.product.slug}, amount ${q.amount}: ${field} should be a string holding a decimal number, got ${JSON.stringify(value)}`,
    q.ex,
  );
  return toScaled(value);
}

const YIELD_RESPONSE = spec("§4.4", "Response: `{ success: boolean, data: Yield calculation }`.");
const AMOUNT_RULE = contract(
  "§3",
  "**amount**: `^(0|[1-9][0-9]*)(\\.[0-9]+)?$`, greater than zero, at most `D` fractional digits, and at most `2^256 − 1` in base units. Anything else is `400 invalid_amount` with a message that says which rule failed.",
);
const NOT_ACTIVE = contract(
  "§8",
  "`yield-calc` on a product that is not `active`, or has no metrics → `409 product_not_active` / `409 metrics_unavailable`.",
);

export const YIELD_CHECKS: readonly CheckDefinition[] = [
  {
    id: "YLD-01",
    kind: "scenario",
    title: "A yield calculation answers the four figures and echoes the principal",
    category: "yield-calc",
    level: "spec",
    cites: [YIELD_RESPONSE, spec("§2", "| principal | string | Echo of the amount supplied. |")],
    tolerates: [GAPS.bounds],
    reference: {
      asserts: "principal in canonical form",
      cites: [contract("§2", "**principal** echoes the supplied amount in canonical form.")],
    },
    failure: "value",
    cost: 1,
    async run(t: CheckContext) {
      const product = quotable(t)[0]!;
      const q = await requestQuote(t, product, "1000");
      if (q === undefined)
        t.skip(`${product.slug} refused the amount 1000, and bounds on amount are not shown`);
      for (const field of YIELD_FIELDS) {
        t.checkWith(
          "schema",
          typeof q.data[field] === "string",
          `${field} should be a string, got ${JSON.stringify(q.data[field])}`,
          q.ex,
        );
      }
      const principal = scaledField(t, q, "principal");
      t.check(
        compareScaled(principal, toScaled("1000")) === 0,
        `principal should echo 1000, got ${JSON.stringify(q.data["principal"])}`,
        q.ex,
      );
      if (t.reference)
        t.check(
          q.data["principal"] === "1000",
          `principal should be "1000", got ${JSON.stringify(q.data["principal"])}`,
          q.ex,
        );
    },
  },
  {
    id: "YLD-02",
    kind: "scenario",
    title: "Yield figures are consistent with the principal, the product's net APY and each other",
    category: "yield-calc",
    level: "spec",
    cites: [
      spec("§2", "| annual_yield | string | Estimated yearly yield, in asset units. |"),
      spec("§2", "| monthly_yield | string | Estimated monthly yield, in asset units. |"),
      spec("§2", "| net_apy_for_user | string | APY used, net of fees. |"),
    ],
    tolerates: [GAPS.formula, GAPS.bounds],
    failure: "value",
    cost: (o) => o.yieldSamples,
    async run(t: CheckContext) {
      const quotes: Quote[] = [];
      for (const [product, amount] of samplePairs(t, t.inputs.plan.yieldSamples, false)) {
        const q = await requestQuote(t, product, amount);
        if (q !== undefined) quotes.push(q);
      }
      if (quotes.length === 0) t.skip("every sampled amount was refused (bounds on amount are not shown)");
      for (const q of quotes) {
        const where = `${q.product.slug}, amount ${q.amount}`;
        const d = q.product.assetDecimals!;
        const principal = scaledField(t, q, "principal");
        const annual = scaledField(t, q, "annual_yield");
        const monthly = scaledField(t, q, "monthly_yield");
        const net = scaledField(t, q, "net_apy_for_user");
        t.check(
          compareScaled(principal, toScaled(q.amount)) === 0,
          `${where}: principal ${JSON.stringify(q.data["principal"])} does not echo the amount`,
          q.ex,
        );
        const productNet = q.product.metrics!["net_apy_for_user"] as string;
        t.check(
          compareScaled(net, toScaled(productNet)) === 0,
          `${where}: net_apy_for_user ${JSON.stringify(q.data["net_apy_for_user"])} differs from the product's ${productNet}`,
          q.ex,
        );
        // annual ≈ principal × net APY, to the precision written (formula and rounding not shown),
        // or within a billionth of the figure (a server computing in floating point).
        const exact = multiply(principal, net);
        const annualUnit = writtenUnit(q.data["annual_yield"] as string, d);
        const tolerance = add(annualUnit, {
          units: exact.units < 0n ? -exact.units : exact.units,
          scale: exact.scale + 9,
        });
        t.check(
          compareScaled(distance(annual, exact), tolerance) <= 0,
          `${where}: annual_yield ${q.data["annual_yield"]} is not principal × net APY (${q.amount} × ${q.data["net_apy_for_user"]}) to the precision it is written in`,
          q.ex,
        );
        if (net.units >= 0n) {
          t.check(monthly.units >= 0n, `${where}: monthly_yield is negative for a non-negative APY`, q.ex);
          // Compound or simple, a month earns at most a twelfth of the year (plus rounding).
          const monthlyUnit = writtenUnit(q.data["monthly_yield"] as string, d);
          t.check(
            compareScaled(times(monthly, 12n), add(add(annual, annualUnit), times(monthlyUnit, 12n))) <= 0,
            `${where}: monthly_yield ${q.data["monthly_yield"]} exceeds annual_yield / 12 (${q.data["annual_yield"]} / 12)`,
            q.ex,
          );
        }
      }
      // Monotone in the principal, per product (in the direction of the APY's sign).
      const byProduct = new Map<string, Quote[]>();
      for (const q of quotes) byProduct.set(q.product.slug, [...(byProduct.get(q.product.slug) ?? []), q]);
      for (const list of byProduct.values()) {
        list.sort((a, b) => compareScaled(toScaled(a.amount), toScaled(b.amount)));
        for (let i = 1; i < list.length; i++) {
          const [a, b] = [list[i - 1]!, list[i]!];
          const sign = toScaled(a.data["net_apy_for_user"] as string).units >= 0n ? 1 : -1;
          for (const field of ["annual_yield", "monthly_yield"]) {
            const cmp = compareScaled(toScaled(b.data[field] as string), toScaled(a.data[field] as string));
            t.check(
              cmp * sign >= 0,
              `${a.product.slug}: ${field} is not monotone in the principal: ${a.amount} gives ${a.data[field]}, ${b.amount} gives ${b.data[field]}`,
              a.ex,
              b.ex,
            );
          }
        }
      }
    },
  },
  {
    id: "YLD-03",
    kind: "scenario",
    title: "Yield figures equal the reference math digit for digit (seeded amounts)",
    category: "yield-calc",
    level: "reference",
    cites: [
      contract(
        "§2",
        "**annual_yield** = `floor(P × n)` at `D` fractional digits, where `P` = principal and `n` = net_apy_for_user.",
      ),
      contract("§2", "This definition is normative: any implementation must reproduce it digit for digit."),
    ],
    failure: "value",
    cost: (o) => o.yieldSamples,
    async run(t: CheckContext) {
      const pairs = samplePairs(t, t.inputs.plan.yieldSamples, true);
      // Always include the smallest amount and the largest one.
      const first = quotable(t)[0]!;
      const d = first.assetDecimals!;
      if (pairs.length >= 1) pairs[0] = [first, fromBaseUnits(1n, d)];
      if (pairs.length >= 2) pairs[1] = [first, fromBaseUnits(MAX_BASE_UNITS, d)];
      // Every wrong figure of every quote is counted, not only the first.
      const wrong: WrongFigure[] = [];
      for (const [product, amount] of pairs) {
        const q = (await requestQuote(t, product, amount))!;
        const apy = product.metrics!["underlying_apy"];
        let expected: Record<string, string>;
        try {
          expected = {
            ...expectedQuote(amount, {
              assetDecimals: product.assetDecimals!,
              underlyingApy: String(apy),
              serviceFeeBps: product.serviceFeeBps ?? -1,
              partnerFeeBps: product.partnerFeeBps ?? -1,
            }),
          };
        } catch (error) {
          t.fail(
            `${product.slug}: the product's terms cannot be quoted: ${(error as Error).message}`,
            t.discovery.exchange,
          );
        }
        for (const field of YIELD_FIELDS) {
          if (q.data[field] !== expected[field])
            wrong.push({
              line: `${product.slug}, amount=${amount}: "${field}" should be "${expected[field]}", got ${JSON.stringify(q.data[field])}`,
              ex: q.ex,
            });
        }
      }
      failOnWrong(t, wrong, pairs.length, "quotes");
    },
  },
  {
    id: "YLD-04",
    kind: "scenario",
    title: "The same amount written with trailing zeros gives the same answer",
    category: "yield-calc",
    level: "reference",
    cites: [
      contract(
        "§3",
        'Trailing fractional zeros within `D` digits are fine: `"1.50"` is accepted and echoed as `"1.5"`.',
      ),
      contract(
        "§2",
        'results do not depend on how the amount was written (`"1.50"` and `"1.5"` give the same response)',
      ),
    ],
    failure: "value",
    cost: 2,
    async run(t: CheckContext) {
      const product = t.product(
        (p) => p.status === "active" && isRecord(p.metrics) && (p.assetDecimals ?? 0) >= 2,
        "active product with metrics and at least 2 decimals",
      );
      const padded = `1.5${"0".repeat(product.assetDecimals! - 1)}`;
      const a = (await requestQuote(t, product, "1.5"))!;
      const b = (await requestQuote(t, product, padded))!;
      t.check(
        b.data["principal"] === "1.5",
        `principal of ${padded} should be "1.5", got ${JSON.stringify(b.data["principal"])}`,
        b.ex,
      );
      t.check(
        sortedJson(a.data) === sortedJson(b.data),
        `"1.5" and "${padded}" give different answers`,
        a.ex,
        b.ex,
      );
    },
  },
  {
    id: "YLD-05",
    kind: "scenario",
    title: "Malformed amounts are refused, never a server error",
    category: "yield-calc",
    level: "spec",
    cites: [
      spec(
        "§4.4",
        "Query parameter: `amount` (string, required): the amount to invest, in units of the product's asset.",
      ),
    ],
    tolerates: [GAPS.statusCodes, GAPS.bounds],
    reference: {
      asserts:
        "400 invalid_amount for every one, numbers in another notation included (at level spec those need only not cause a 5xx)",
      cites: [
        contract(
          "§3",
          '`"1e3"`, `"+1"`, `"-1"`, `"0"`, `".5"`, `"5."`, `" 5"`, `"0x10"`, `"1,000"`, `"NaN"`, `"01"`, a full-width digit: all refused.',
        ),
      ],
    },
    failure: "status",
    cost: 15,
    async run(t: CheckContext) {
      const product = quotable(t)[0]!;
      // Refused at every level: no amount at all, or text that is no number in any notation.
      const notNumbers: Array<string | undefined> = ["NaN", "abc", "", undefined];
      // Numbers in some notation or locale: interface.md does not rule them out, CONTRACT §3 does.
      const contractRefusals = ["1,000", "0x10", "1e3", "+1", "-1", "0", ".5", "5.", " 5", "01", "\uff11"];
      for (const amount of [...notNumbers, ...contractRefusals]) {
        const ex = await t.get(yieldPath(product.slug, amount));
        const what =
          amount === undefined
            ? "yield-calc without an amount"
            : `yield-calc with amount ${JSON.stringify(amount)}`;
        if (t.reference || notNumbers.includes(amount)) {
          t.expectRefused(ex, what, { status: 400, code: "invalid_amount" });
        } else {
          t.checkWith("server_error", t.status(ex) < 500, `${what}: server error ${t.status(ex)}`, ex);
        }
      }
    },
  },
  {
    id: "YLD-06",
    kind: "scenario",
    title: "An amount with more fractional digits than the asset has is refused",
    category: "yield-calc",
    level: "reference",
    cites: [AMOUNT_RULE],
    failure: "status",
    cost: 2,
    async run(t: CheckContext) {
      const product = quotable(t)[0]!;
      const d = product.assetDecimals!;
      for (const amount of [`1.${"0".repeat(d)}1`, `1.${"0".repeat(d + 1)}`]) {
        const ex = await t.get(yieldPath(product.slug, amount));
        t.expectRefused(ex, `amount ${amount} (${d + 1} fractional digits, ${product.slug} has ${d})`, {
          status: 400,
          code: "invalid_amount",
        });
      }
    },
  },
  {
    id: "YLD-07",
    kind: "scenario",
    title: "An amount above 2^256 − 1 base units is refused",
    category: "yield-calc",
    level: "reference",
    cites: [AMOUNT_RULE],
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const product = quotable(t)[0]!;
      const amount = fromBaseUnits(MAX_BASE_UNITS + 1n, product.assetDecimals!);
      const ex = await t.get(yieldPath(product.slug, amount));
      t.expectRefused(ex, `amount 2^256 base units (${amount})`, { status: 400, code: "invalid_amount" });
    },
  },
  {
    id: "YLD-08",
    kind: "scenario",
    title: "A product that is not active gets no quote (409)",
    category: "yield-calc",
    level: "reference",
    cites: [NOT_ACTIVE],
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const product = t.product(
        (p) => (p.status === "paused" || p.status === "deprecated") && isRecord(p.metrics),
        "paused or deprecated product with metrics",
      );
      const ex = await t.get(yieldPath(product.slug, "1"));
      t.expectRefused(ex, `yield-calc of ${product.status} product ${product.slug}`, {
        status: 409,
        code: "product_not_active",
      });
    },
  },
  {
    id: "YLD-09",
    kind: "scenario",
    title: "An active product without metrics gets no quote (409)",
    category: "yield-calc",
    level: "reference",
    cites: [NOT_ACTIVE],
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const product = t.product(
        (p) => p.status === "active" && p.metrics === null,
        "active product without metrics",
      );
      const ex = await t.get(yieldPath(product.slug, "1"));
      t.expectRefused(ex, `yield-calc of ${product.slug} (latest_metrics null)`, {
        status: 409,
        code: "metrics_unavailable",
      });
    },
  },
  {
    id: "YLD-10",
    kind: "scenario",
    title: "A repeated query parameter is refused; an unknown one is ignored",
    category: "yield-calc",
    level: "reference",
    cites: [
      contract(
        "§3",
        "**Query strings**: a repeated parameter (`?amount=1&amount=2`) is `400`; unknown parameters are ignored.",
      ),
      decision(
        "Query parameters (§3)",
        "A repeated known parameter is `400 invalid_parameter`; unknown parameters (repeated or not) are ignored.",
      ),
    ],
    failure: "status",
    cost: 2,
    async run(t: CheckContext) {
      const product = quotable(t)[0]!;
      const repeated = await t.get(`${productPath(product.slug)}/yield-calc?amount=1&amount=2`);
      t.expectRefused(repeated, "amount given twice", { status: 400, code: "invalid_parameter" });
      const unknown = await t.get(`${productPath(product.slug)}/yield-calc?amount=1&utm_source=conformance`);
      t.expectOk(unknown, "yield-calc with an unknown extra parameter");
    },
  },
  {
    id: "YLD-11",
    kind: "scenario",
    title: "The product is resolved before the amount: unknown slug with a bad amount is 404",
    category: "yield-calc",
    level: "reference",
    cites: [
      contract(
        "§3",
        "The product is resolved before query validation, since `amount` is checked against the product's decimals.",
      ),
    ],
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const ex = await t.get(yieldPath(missingSlug(t), "not-a-number"));
      t.expectRefused(ex, "yield-calc of an unknown product with a malformed amount", {
        status: 404,
        code: "product_not_found",
      });
    },
  },
  {
    id: "YLD-12",
    kind: "scenario",
    title: "Input errors come before state errors: a bad amount on a paused product is 400",
    category: "yield-calc",
    level: "reference",
    cites: [
      decision(
        "Order of checks on GET endpoints (§3, §5)",
        "Input errors come before state errors: `yield-calc?amount=abc` on a paused product is `400 invalid_amount`, not `409`.",
      ),
    ],
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const product = t.product(
        (p) => p.status === "paused" || p.status === "deprecated",
        "paused or deprecated product",
      );
      const ex = await t.get(yieldPath(product.slug, "abc"));
      t.expectRefused(ex, `yield-calc of ${product.status} product ${product.slug} with amount "abc"`, {
        status: 400,
        code: "invalid_amount",
      });
    },
  },
];
