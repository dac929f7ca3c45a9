/**
 * The properties of CONTRACT §2 that can be checked through the API of any deployment, with the
 * IDs of the in-process suite where the invariant is the same. Each quote property draws the same
 * cases (a product, two amounts) from the same seed, so the quotes one property asks for are
 * mostly those another already has: a run of all of them costs about as much as its largest.
 * Expected figures come from the harness's oracle, never from the core.
 * @module
 */
import fc from "fast-check";
import type { ListedProduct } from "../checks/context.js";
import { sortedJson } from "../checks/json-text.js";
import type { Exchange } from "../http/client.js";
import { floorQuotient, fromBaseUnits, isCanonical, MAX_BASE_UNITS, toBaseUnits } from "../oracle/decimal.js";
import { MONTHLY_SCALE, monthlyFactor, netApyUnits, RATE_DIGITS } from "../oracle/yield.js";
import type { ApiTarget, QuoteAnswer, QuoteRefusal } from "./api-target.js";

/** A property found false: the message and the exchanges that show it. */
export class Violation extends Error {
  override readonly name = "Violation";
  constructor(
    message: string,
    readonly exchanges: readonly Exchange[],
  ) {
    super(message);
  }
}

/** One generated case: a product and two amounts in its base units. */
export interface QuoteCase {
  readonly product: ListedProduct;
  readonly p1: bigint;
  readonly p2: bigint;
}

/** A quote read as numbers: amounts in base units, the net APY in units of 10^−18. */
export interface ReadQuote {
  readonly answer: QuoteAnswer;
  readonly principal: bigint;
  readonly annual: bigint;
  readonly monthly: bigint;
  readonly net: bigint;
}

export interface ApiPropertyDefinition {
  /** The ID of the in-process property with the same invariant. */
  readonly id: string;
  readonly title: string;
  /** The invariant as the API lets it be checked. */
  readonly statement: string;
  readonly source: string;
  /** `quote`: a fast-check property over generated cases; `products`/`positions`: every one listed. */
  readonly over: "quote" | "products" | "positions";
  /** For `quote`: the amounts of a case it uses (P₁ only, or P₁ and P₂). */
  readonly amounts?: 1 | 2;
  /** For `quote`: the check of one case. */
  readonly holds?: (c: QuoteCase, q: Quoter) => Promise<void>;
}

/**
 * Asks the deployment for a quote of `units` (written as `text` when given, canonical otherwise)
 * and reads it; a refusal discards the case.
 */
export type Quoter = (product: ListedProduct, units: bigint, text?: string) => Promise<ReadQuote>;

/** Amounts in base units for an asset with `decimals`: dust, everyday sizes, and huge ones. */
function amounts(decimals: number): fc.Arbitrary<bigint> {
  const one = 10n ** BigInt(decimals);
  return fc.oneof(
    { weight: 2, arbitrary: fc.bigInt({ min: 1n, max: one }) },
    { weight: 5, arbitrary: fc.bigInt({ min: 1n, max: one * 1_000_000n }) },
    // At most half of 2^256 − 1, so P₁ + P₂ is still a valid amount.
    { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: MAX_BASE_UNITS / 2n }) },
  );
}

/** The cases every quote property draws, over the quotable products. */
export function quoteCases(products: readonly ListedProduct[]): fc.Arbitrary<QuoteCase> {
  return fc.nat(products.length - 1).chain((i) => {
    const product = products[i]!;
    const d = product.assetDecimals!;
    return fc.tuple(amounts(d), amounts(d)).map(([p1, p2]): QuoteCase => ({ product, p1, p2 }));
  });
}

/** A figure read at `decimals` digits, or a violation naming the field. */
export function figure(answer: QuoteAnswer, field: string, decimals: number): bigint {
  const value = answer.data[field];
  try {
    if (typeof value !== "string") throw new RangeError("not a string");
    return toBaseUnits(value, decimals);
  } catch {
    throw new Violation(
      `${field} ${JSON.stringify(value)} is not a decimal with at most ${decimals} fractional digits`,
      [answer.exchange],
    );
  }
}

/** Reads a quote answer; a refusal discards the case (fc.pre), the property cannot be judged on it. */
export function readQuote(answer: QuoteAnswer | QuoteRefusal, decimals: number): ReadQuote {
  fc.pre(!("refused" in answer));
  const a = answer as QuoteAnswer;
  return {
    answer: a,
    principal: figure(a, "principal", decimals),
    annual: figure(a, "annual_yield", decimals),
    monthly: figure(a, "monthly_yield", decimals),
    net: figure(a, "net_apy_for_user", RATE_DIGITS),
  };
}

function show(units: bigint, decimals: number): string {
  return fromBaseUnits(units, decimals);
}

function violation(condition: boolean, message: string, ...quotes: ReadQuote[]): void {
  if (!condition)
    throw new Violation(
      message,
      quotes.map((q) => q.answer.exchange),
    );
}

const SOURCE = "CONTRACT §2 (invariants)";

export const API_PROPERTIES: readonly ApiPropertyDefinition[] = [
  {
    id: "P-04",
    title: "Net APY is the fee formula truncated to 18 digits",
    statement:
      "each listed product: net_apy_for_user = a × (10000 − f) / 10000 cut at 18 digits (a > 0), = a (a ≤ 0)",
    source: "CONTRACT §2 (net_apy_for_user)",
    over: "products",
  },
  {
    id: "P-06",
    title: "annual_yield is exact to the last base unit",
    statement: "annual = floor(P × n), P and n as the API answers them",
    source: "CONTRACT §2 (annual_yield)",
    over: "quote",
    amounts: 1,
    async holds(c, quote) {
      const d = c.product.assetDecimals!;
      const q = await quote(c.product, c.p1);
      const expected = floorQuotient(q.principal * q.net, 10n ** 18n);
      violation(
        q.annual === expected,
        `annual_yield ${show(q.annual, d)} for ${show(q.principal, d)} at n = ${show(q.net, RATE_DIGITS)}; floor(P × n) is ${show(expected, d)}`,
        q,
      );
    },
  },
  {
    id: "P-08",
    title: "monthly_yield is exact to the last base unit",
    statement:
      "monthly = floor(P × (R − S) / S), R the largest integer with R^12 ≤ S^12 × (1 + n), S = 10^36",
    source: "CONTRACT §2 (monthly_yield)",
    over: "quote",
    amounts: 1,
    async holds(c, quote) {
      const d = c.product.assetDecimals!;
      const q = await quote(c.product, c.p1);
      const r = monthlyFactor(q.net);
      const expected = floorQuotient(q.principal * (r - MONTHLY_SCALE), MONTHLY_SCALE);
      violation(
        q.monthly === expected,
        `monthly_yield ${show(q.monthly, d)} for ${show(q.principal, d)} at n = ${show(q.net, RATE_DIGITS)}; floor(P × (R − S) / S) is ${show(expected, d)}`,
        q,
      );
    },
  },
  {
    id: "P-09",
    title: "A month earns at most a twelfth of the year",
    statement: "n ≥ 0 ⇒ 0 ≤ monthly and 12 × monthly ≤ annual",
    source: SOURCE,
    over: "quote",
    amounts: 1,
    async holds(c, quote) {
      const d = c.product.assetDecimals!;
      const q = await quote(c.product, c.p1);
      if (q.net < 0n) return;
      violation(
        q.monthly >= 0n,
        `monthly_yield ${show(q.monthly, d)} < 0 at n = ${show(q.net, RATE_DIGITS)}`,
        q,
      );
      violation(
        12n * q.monthly <= q.annual,
        `12 × monthly_yield = ${show(12n * q.monthly, d)} exceeds annual_yield ${show(q.annual, d)} for ${show(q.principal, d)}`,
        q,
      );
    },
  },
  {
    id: "P-10",
    title: "Yield is monotone in the principal",
    statement: "P₁ ≤ P₂ ⇒ y(P₁) ≤ y(P₂) for n ≥ 0 (≥ for n < 0), annual and monthly",
    source: SOURCE,
    over: "quote",
    amounts: 2,
    async holds(c, quote) {
      const d = c.product.assetDecimals!;
      const [low, high] = c.p1 <= c.p2 ? [c.p1, c.p2] : [c.p2, c.p1];
      const a = await quote(c.product, low);
      const b = await quote(c.product, high);
      const sign = a.net >= 0n ? 1n : -1n;
      for (const [field, x, y] of [
        ["annual_yield", a.annual, b.annual],
        ["monthly_yield", a.monthly, b.monthly],
      ] as const) {
        violation(
          (y - x) * sign >= 0n,
          `${field}: ${show(low, d)} gives ${show(x, d)}, the larger ${show(high, d)} gives ${show(y, d)}`,
          a,
          b,
        );
      }
    },
  },
  {
    id: "P-12",
    title: "Yield is floor-superadditive",
    statement: "y(P₁) + y(P₂) ≤ y(P₁ + P₂) ≤ y(P₁) + y(P₂) + 1 unit, annual and monthly",
    source: SOURCE,
    over: "quote",
    amounts: 2,
    async holds(c, quote) {
      const d = c.product.assetDecimals!;
      const a = await quote(c.product, c.p1);
      const b = await quote(c.product, c.p2);
      const whole = await quote(c.product, c.p1 + c.p2);
      for (const field of ["annual", "monthly"] as const) {
        const parts = a[field] + b[field];
        violation(
          parts <= whole[field] && whole[field] <= parts + 1n,
          `${field}_yield: ${show(a[field], d)} + ${show(b[field], d)} = ${show(parts, d)} for ${show(c.p1, d)} + ${show(c.p2, d)}, but ${show(whole[field], d)} for ${show(c.p1 + c.p2, d)}`,
          a,
          b,
          whole,
        );
      }
    },
  },
  {
    id: "P-14",
    title: "Results do not depend on how the amount was written",
    statement: 'quote("1.50") = quote("1.5"): a trailing zero within D digits changes nothing',
    source: "CONTRACT §2 (invariants), §3",
    over: "quote",
    amounts: 1,
    async holds(c, quote) {
      const d = c.product.assetDecimals!;
      fc.pre(d > 0);
      // A multiple of 10 base units has a digit to spare for a trailing zero.
      const units = c.p1 - (c.p1 % 10n) || 10n;
      const plain = await quote(c.product, units);
      const text = fromBaseUnits(units, d);
      const padded = `${text}${text.includes(".") ? "" : "."}0`;
      const other = await quote(c.product, units, padded);
      violation(
        sortedJson(plain.answer.data) === sortedJson(other.answer.data),
        `"${text}" and "${padded}" give different answers`,
        plain,
        other,
      );
    },
  },
  {
    id: "P-15",
    title: "Every output is a canonical decimal",
    statement:
      "every figure of a quote matches ^-?(0|[1-9][0-9]*)(\\.[0-9]*[1-9])?$, and the principal echoes the amount",
    source: "CONTRACT §1, §2 (invariants)",
    over: "quote",
    amounts: 1,
    async holds(c, quote) {
      const d = c.product.assetDecimals!;
      const q = await quote(c.product, c.p1);
      for (const field of ["principal", "annual_yield", "monthly_yield", "net_apy_for_user"]) {
        const value = q.answer.data[field];
        violation(isCanonical(value), `${field} ${JSON.stringify(value)} is not a canonical decimal`, q);
      }
      violation(
        q.answer.data["principal"] === show(c.p1, d),
        `principal ${JSON.stringify(q.answer.data["principal"])} does not echo ${show(c.p1, d)}`,
        q,
      );
    },
  },
  {
    id: "P-17",
    title: "assets never exceeds what the vault holds",
    statement:
      "each position read: assets ≤ the product's wrapper_total_assets; no shares ⇒ no assets ⇒ usd_value 0",
    source: SOURCE,
    over: "positions",
  },
];

/** The expected net APY of a listed product, as text, or undefined when it has no metrics. */
export function expectedNet(product: ListedProduct): string | undefined {
  const m = product.metrics;
  if (!isMetrics(m) || product.serviceFeeBps === undefined || product.partnerFeeBps === undefined)
    return undefined;
  return fromBaseUnits(
    netApyUnits(m["underlying_apy"], product.serviceFeeBps, product.partnerFeeBps),
    RATE_DIGITS,
  );
}

function isMetrics(m: ListedProduct["metrics"]): m is Record<string, unknown> & { underlying_apy: string } {
  return typeof m === "object" && m !== null && typeof m["underlying_apy"] === "string";
}

/** `target.quote` for base units, read: the Quoter the runner hands each property. */
export function quoterFor(target: ApiTarget): Quoter {
  return async (product, units, text) => {
    const d = product.assetDecimals!;
    return readQuote(await target.quote(product, text ?? fromBaseUnits(units, d)), d);
  };
}
