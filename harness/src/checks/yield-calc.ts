/**
 * The yield calculator (interface.md §4.4; CONTRACT §2, §3). At level `spec` the answers must be
 * consistent with themselves and the product; at `reference` they must equal the core's
 * reference math digit for digit, for seeded random amounts.
 * @module
 */
import { canonicalJson } from "@partner-yield/core";
import {
  formatUnits,
  MAX_UINT256,
  parseDecimal,
  quoteYield,
  RATE_DECIMALS,
  unwrap,
} from "@partner-yield/core/math";
import fc from "fast-check";
import { missingSlug } from "./auth.js";
import { type CheckContext, isRecord, type ListedProduct, productPath, yieldPath } from "./context.js";
import {
  add,
  compareScaled,
  distance,
  isDecimalText,
  multiply,
  type Scaled,
  times,
  toScaled,
  unit,
} from "./decimal-text.js";
import type { CheckDefinition } from "./types.js";

const YIELD_FIELDS = ["principal", "annual_yield", "monthly_yield", "net_apy_for_user"] as const;

/** Active products with metrics and known decimals: the ones a quote can be asked for. */
function quotable(t: CheckContext): ListedProduct[] {
  const list = t
    .products()
    .filter(
      (p) =>
        p.status === "active" &&
        p.metrics !== null &&
        p.metrics !== undefined &&
        p.assetDecimals !== undefined &&
        typeof p.metrics["net_apy_for_user"] === "string",
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
  if (huge) parts.push({ arbitrary: fc.bigInt({ min: 1n, max: MAX_UINT256 }), weight: 1 });
  return fc.oneof(...parts);
}

interface Quote {
  readonly product: ListedProduct;
  readonly amount: string;
  readonly ex: Parameters<CheckContext["expectOk"]>[0];
  readonly data: Record<string, unknown>;
}

async function requestQuote(t: CheckContext, product: ListedProduct, amount: string): Promise<Quote> {
  const ex = await t.get(yieldPath(product.slug, amount));
  const body = t.expectOk(ex, `yield-calc of ${amount} in ${product.slug}`);
  const data = body["data"];
  t.check(isRecord(data), `yield-calc of ${amount} in ${product.slug}: "data" is not an object`, ex);
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
    pairs.push([product, formatUnits(units!, d)]);
  }
  return pairs;
}

function scaledField(t: CheckContext, q: Quote, field: string): Scaled {
  const value = q.data[field];
  t.check(
    isDecimalText(value),
    `${q.product.slug}, amount ${q.amount}: ${field} should be a string holding a decimal number, got ${JSON.stringify(value)}`,
    q.ex,
  );
  return toScaled(value);
}

export const YIELD_CHECKS: readonly CheckDefinition[] = [
  {
    id: "YLD-01",
    title: "A yield calculation answers the four figures and echoes the principal",
    category: "yield-calc",
    level: "spec",
    source: "interface.md §2 (Yield calculation), §4.4",
    reference: "principal in canonical form (CONTRACT §2)",
    cost: 1,
    async run(t: CheckContext) {
      const product = quotable(t)[0]!;
      const q = await requestQuote(t, product, "1000");
      for (const field of YIELD_FIELDS) {
        t.check(
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
    title: "Yield figures are consistent with the principal, the product's net APY and each other",
    category: "yield-calc",
    level: "spec",
    source: "interface.md §2 (Yield calculation), §4.4",
    cost: (o) => o.yieldSamples,
    async run(t: CheckContext) {
      const quotes: Quote[] = [];
      for (const [product, amount] of samplePairs(t, t.inputs.plan.yieldSamples, false)) {
        quotes.push(await requestQuote(t, product, amount));
      }
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
        if (isDecimalText(productNet)) {
          t.check(
            compareScaled(net, toScaled(productNet)) === 0,
            `${where}: net_apy_for_user ${JSON.stringify(q.data["net_apy_for_user"])} differs from the product's ${productNet}`,
            q.ex,
          );
        }
        // annual ≈ principal × net APY: within one base unit, or a billionth of the figure.
        const exact = multiply(principal, net);
        const tolerance = add(unit(d), {
          units: exact.units < 0n ? -exact.units : exact.units,
          scale: exact.scale + 9,
        });
        t.check(
          compareScaled(distance(annual, exact), tolerance) <= 0,
          `${where}: annual_yield ${q.data["annual_yield"]} is not principal × net APY (${q.amount} × ${q.data["net_apy_for_user"]})`,
          q.ex,
        );
        if (net.units >= 0n) {
          t.check(monthly.units >= 0n, `${where}: monthly_yield is negative for a non-negative APY`, q.ex);
          // Compound or simple, a month earns at most a twelfth of the year (plus a rounding unit).
          t.check(
            compareScaled(times(monthly, 12n), add(annual, times(unit(d), 12n))) <= 0,
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
    title: "Yield figures equal the reference math digit for digit (seeded amounts)",
    category: "yield-calc",
    level: "reference",
    source: "CONTRACT §2 (annual_yield, monthly_yield)",
    cost: (o) => o.yieldSamples,
    async run(t: CheckContext) {
      const pairs = samplePairs(t, t.inputs.plan.yieldSamples, true);
      // Always include the smallest amount and the largest one.
      const first = quotable(t)[0]!;
      const d = first.assetDecimals!;
      if (pairs.length >= 1) pairs[0] = [first, formatUnits(1n, d)];
      if (pairs.length >= 2) pairs[1] = [first, formatUnits(MAX_UINT256, d)];
      for (const [product, amount] of pairs) {
        const q = await requestQuote(t, product, amount);
        const apy = product.metrics!["underlying_apy"];
        let expected: Record<string, string>;
        try {
          expected = {
            ...quoteYield({
              amountUnits: unwrap(parseDecimal(amount, product.assetDecimals!)),
              assetDecimals: product.assetDecimals!,
              underlyingApyWad: unwrap(parseDecimal(String(apy), RATE_DECIMALS)),
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
          t.check(
            q.data[field] === expected[field],
            `${product.slug}, amount ${amount}: ${field} should be ${expected[field]}, got ${JSON.stringify(q.data[field])}`,
            q.ex,
          );
        }
      }
    },
  },
  {
    id: "YLD-04",
    title: "The same amount written with trailing zeros gives the same answer",
    category: "yield-calc",
    level: "reference",
    source: 'CONTRACT §2, §3 ("1.50" and "1.5")',
    cost: 2,
    async run(t: CheckContext) {
      const product = t.product(
        (p) => p.status === "active" && isRecord(p.metrics) && (p.assetDecimals ?? 0) >= 2,
        "active product with metrics and at least 2 decimals",
      );
      const padded = `1.5${"0".repeat(product.assetDecimals! - 1)}`;
      const a = await requestQuote(t, product, "1.5");
      const b = await requestQuote(t, product, padded);
      t.check(
        b.data["principal"] === "1.5",
        `principal of ${padded} should be "1.5", got ${JSON.stringify(b.data["principal"])}`,
        b.ex,
      );
      t.check(
        unwrap(canonicalJson(a.data)) === unwrap(canonicalJson(b.data)),
        `"1.5" and "${padded}" give different answers`,
        a.ex,
        b.ex,
      );
    },
  },
  {
    id: "YLD-05",
    title: "Malformed amounts are refused, never a server error",
    category: "yield-calc",
    level: "spec",
    source: "interface.md §4.4",
    reference: "400 invalid_amount for every one (CONTRACT §3)",
    cost: 15,
    async run(t: CheckContext) {
      const product = quotable(t)[0]!;
      // Refused at every level: these are not numbers at all.
      const notNumbers: Array<string | undefined> = ["NaN", "1,000", "0x10", "abc", "", undefined];
      // Numbers in some notation: interface.md does not rule them out, CONTRACT §3 does.
      const contractRefusals = ["1e3", "+1", "-1", "0", ".5", "5.", " 5", "01"];
      for (const amount of [...notNumbers, ...contractRefusals, "\uff11"]) {
        const ex = await t.get(yieldPath(product.slug, amount));
        const what =
          amount === undefined
            ? "yield-calc without an amount"
            : `yield-calc with amount ${JSON.stringify(amount)}`;
        if (t.reference || notNumbers.includes(amount) || amount === "\uff11") {
          t.expectRefused(ex, what, { status: 400, code: "invalid_amount" });
        } else {
          t.check(t.status(ex) < 500, `${what}: server error ${t.status(ex)}`, ex);
        }
      }
    },
  },
  {
    id: "YLD-06",
    title: "An amount with more fractional digits than the asset has is refused",
    category: "yield-calc",
    level: "reference",
    source: "CONTRACT §3 (amount)",
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
    title: "An amount above 2^256 − 1 base units is refused",
    category: "yield-calc",
    level: "reference",
    source: "CONTRACT §3 (amount)",
    cost: 1,
    async run(t: CheckContext) {
      const product = quotable(t)[0]!;
      const amount = formatUnits(MAX_UINT256 + 1n, product.assetDecimals!);
      const ex = await t.get(yieldPath(product.slug, amount));
      t.expectRefused(ex, `amount 2^256 base units (${amount})`, { status: 400, code: "invalid_amount" });
    },
  },
  {
    id: "YLD-08",
    title: "A product that is not active gets no quote (409)",
    category: "yield-calc",
    level: "reference",
    source: "CONTRACT §8",
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
    title: "An active product without metrics gets no quote (409)",
    category: "yield-calc",
    level: "reference",
    source: "CONTRACT §8",
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
    title: "A repeated query parameter is refused; an unknown one is ignored",
    category: "yield-calc",
    level: "reference",
    source: "CONTRACT §3 (query strings), docs/contract.md",
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
    title: "The product is resolved before the amount: unknown slug with a bad amount is 404",
    category: "yield-calc",
    level: "reference",
    source: "CONTRACT §3 (slug)",
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
    title: "Input errors come before state errors: a bad amount on a paused product is 400",
    category: "yield-calc",
    level: "reference",
    source: "CONTRACT §3, §8; docs/contract.md (order of checks)",
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
