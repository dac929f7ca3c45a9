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
import { convertedAssets, usdValue } from "../oracle/position.js";
import { MONTHLY_SCALE, monthlyFactor, netApyUnits, RATE_DIGITS } from "../oracle/yield.js";
import type { Answer, ApiTarget, QuoteAnswer } from "./api-target.js";

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
  /** For `quote`: requests one case may need (its own, before another property's cache). */
  readonly cost?: number;
  /** For `quote`: the check of one case. */
  readonly holds?: (c: QuoteCase, q: Quoter) => Promise<void>;
  /**
   * For `positions`: what a position must show to be judged (`vault`: the audit view; `price`:
   * its price when assets > 0), and the check: an error message, or undefined when it holds.
   */
  readonly needs?: "vault" | "price";
  readonly judge?: (p: PositionRead) => string | undefined;
}

/** A position answer read as numbers (base units), with the audit view when it was served. */
export interface PositionRead {
  readonly product: ListedProduct;
  readonly wallet: string;
  readonly answer: QuoteAnswer;
  readonly decimals: number;
  readonly assets: bigint;
  readonly usd: bigint;
  readonly sharesText: string;
  readonly vault?: VaultView;
}

/** The audit view of a position (CONTRACT §2, `data.vault`), read. */
export interface VaultView {
  readonly decimalsOffset: number;
  readonly totalAssets: bigint;
  readonly totalSupply: bigint;
  readonly usdPrice?: string;
}

/** Amount classes every quote property exercises on purpose (docs/math.md, the coverage record). */
export const AMOUNT_CLASSES = ["zero", "one unit", "max precision", "everyday", "huge"] as const;
export type AmountClass = (typeof AMOUNT_CLASSES)[number];

/** Above this many base units an amount is `huge` (up to 2^256 − 1). */
export const HUGE_UNITS = 10n ** 30n;

/** The class of an amount of `units` base units at `decimals` digits. */
export function amountClass(units: bigint, decimals: number): AmountClass {
  if (units === 0n) return "zero";
  if (units === 1n) return "one unit";
  if (units > HUGE_UNITS) return "huge";
  if (decimals > 0 && units % 10n !== 0n) return "max precision";
  return "everyday";
}

/** The product classes of a listed product: its status, its decimals, and the loss product. */
export function productClasses(product: ListedProduct): string[] {
  const classes = [`status ${product.status ?? "?"}`, `decimals ${product.assetDecimals ?? "?"}`];
  const net = product.metrics?.["net_apy_for_user"];
  if (typeof net === "string" && net.startsWith("-")) classes.push("loss product");
  return classes;
}

/** Products that cover every product class, the fewest first, then the others in list order. */
export function coveringOrder(products: readonly ListedProduct[]): ListedProduct[] {
  const chosen: ListedProduct[] = [];
  const covered = new Set<string>();
  for (const product of products) {
    const classes = productClasses(product);
    if (classes.some((c) => !covered.has(c))) {
      chosen.push(product);
      for (const c of classes) covered.add(c);
    }
  }
  return [...chosen, ...products.filter((p) => !chosen.includes(p))];
}

/**
 * Cases made on purpose so that every amount class meets every covering product class, `rounds`
 * times over (the first runs of every quote property; random cases follow).
 */
export function classCases(products: readonly ListedProduct[], rounds: number): QuoteCase[] {
  const reps = coveringOrder(products).filter((p, i, all) => {
    const before = new Set(all.slice(0, i).flatMap(productClasses));
    return productClasses(p).some((c) => !before.has(c));
  });
  if (reps.length === 0) return [];
  const fractional = reps.find((p) => (p.assetDecimals ?? 0) > 0);
  const classes = AMOUNT_CLASSES.filter((c) => c !== "max precision" || fractional !== undefined);
  const cases: QuoteCase[] = [];
  for (let r = 0; r < rounds; r++) {
    const n = Math.max(reps.length, classes.length);
    const used = new Set<ListedProduct>();
    for (let i = 0; i < n; i++) {
      const cls = classes[i % classes.length]!;
      let product = reps[i % reps.length]!;
      if (cls === "max precision" && (product.assetDecimals ?? 0) === 0) product = fractional!;
      const one = 10n ** BigInt(product.assetDecimals!);
      const k = BigInt(r + 1);
      const p1 =
        cls === "zero"
          ? 0n
          : cls === "one unit"
            ? 1n
            : cls === "max precision"
              ? one * k + one - 1n
              : cls === "everyday"
                ? one * 1000n * k
                : MAX_BASE_UNITS / 2n - k;
      used.add(product);
      cases.push({ product, p1, p2: one * 250n * k + 1n });
    }
    // A product moved off for `max precision` (0 decimals) still gets its case of the round.
    for (const product of reps.filter((p) => !used.has(p))) {
      const one = 10n ** BigInt(product.assetDecimals!);
      cases.push({ product, p1: one * 1000n * BigInt(r + 1), p2: one * 250n * BigInt(r + 1) + 1n });
    }
  }
  return cases;
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

/**
 * Reads a quote answer. A refusal (4xx) discards the case (fc.pre): the property cannot be judged
 * on it. A 5xx, no answer or an unreadable one on a valid amount is a violation, never a discard.
 */
export function readQuote(answer: Answer, decimals: number): ReadQuote {
  if ("broken" in answer) throw new Violation(`a valid amount got ${answer.broken}`, [answer.exchange]);
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
    cost: 1,
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
    cost: 1,
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
    cost: 1,
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
    cost: 2,
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
    cost: 3,
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
    cost: 2,
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
    cost: 1,
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
    id: "P-16",
    title: "A position's assets are the floor of its virtual share",
    statement:
      "each position with the audit view: assets = floor(shares × (total_assets + 1) / (total_supply + 10^δ))",
    source: "CONTRACT §2 (position)",
    over: "positions",
    needs: "vault",
    judge(p) {
      const v = p.vault!;
      let shares: bigint;
      try {
        shares = toBaseUnits(p.sharesText, p.decimals + v.decimalsOffset);
      } catch {
        return `shares ${JSON.stringify(p.sharesText)} is not a decimal with at most ${p.decimals + v.decimalsOffset} fractional digits (asset decimals ${p.decimals} + δ ${v.decimalsOffset})`;
      }
      const expected = convertedAssets(shares, v.totalAssets, v.totalSupply, v.decimalsOffset);
      if (p.assets === expected) return undefined;
      return `assets ${show(p.assets, p.decimals)} for shares ${p.sharesText}; floor(${shares} × (${v.totalAssets} + 1) / (${v.totalSupply} + 10^${v.decimalsOffset})) = ${expected} base units, i.e. ${show(expected, p.decimals)}`;
    },
  },
  {
    id: "P-17",
    title: "assets never exceeds what the vault holds",
    statement:
      "each position read: assets ≤ the product's wrapper_total_assets (and ≤ the audit view's total_assets); no shares ⇒ no assets ⇒ usd_value 0",
    source: SOURCE,
    over: "positions",
    judge(p) {
      if (p.sharesText === "0" && p.assets !== 0n)
        return `no shares, yet assets ${show(p.assets, p.decimals)}`;
      if (p.assets === 0n && p.usd !== 0n) return `no assets, yet usd_value ${show(p.usd, 2)}`;
      const total = p.product.metrics?.["wrapper_total_assets"];
      if (typeof total === "string") {
        let vault: bigint;
        try {
          vault = toBaseUnits(total, p.decimals);
        } catch {
          return `wrapper_total_assets ${JSON.stringify(total)} is not a decimal at ${p.decimals} digits`;
        }
        if (p.assets > vault)
          return `assets ${show(p.assets, p.decimals)} exceed the product's wrapper_total_assets ${show(vault, p.decimals)}`;
      }
      if (p.vault !== undefined && p.assets > p.vault.totalAssets)
        return `assets ${p.assets} base units exceed the audit view's total_assets ${p.vault.totalAssets}`;
      return undefined;
    },
  },
  {
    id: "P-19",
    title: "usd_value is the value rounded down to the cent",
    statement:
      "each position: usd_value = floor(assets × usd_price) at 2 digits (the audit view's price); 0 without assets",
    source: "CONTRACT §2 (usd_value)",
    over: "positions",
    needs: "price",
    judge(p) {
      if (p.assets === 0n) return p.usd === 0n ? undefined : `no assets, yet usd_value ${show(p.usd, 2)}`;
      const price = p.vault!.usdPrice!;
      const expected = usdValue(p.assets, p.decimals, price);
      if (show(p.usd, 2) === expected) return undefined;
      return `usd_value ${show(p.usd, 2)} for assets ${show(p.assets, p.decimals)} at usd_price ${price}; floor to the cent is ${expected}`;
    },
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

/**
 * Reads a position answer, or says why it cannot be judged: `broken` (a failure of every position
 * property), `refused` (discarded), or an unreadable figure (a failure).
 */
export function readPosition(
  product: ListedProduct,
  wallet: string,
  answer: Answer,
): { read: PositionRead } | { failure: string } | { refused: string } {
  if ("broken" in answer) return { failure: `a valid position request got ${answer.broken}` };
  if ("refused" in answer) return { refused: answer.refused };
  const d = product.assetDecimals;
  if (d === undefined) return { refused: "the product list gives no asset_decimals" };
  const { shares, assets, usd_value: usd, vault } = answer.data;
  if (typeof shares !== "string" || !isCanonical(shares))
    return { failure: `shares ${JSON.stringify(shares)} is not a canonical decimal` };
  let assetUnits: bigint;
  let usdUnits: bigint;
  try {
    assetUnits = toBaseUnits(assets as string, d);
  } catch {
    return {
      failure: `assets ${JSON.stringify(assets)} is not a decimal with at most ${d} fractional digits`,
    };
  }
  try {
    usdUnits = toBaseUnits(usd as string, 2);
  } catch {
    return { failure: `usd_value ${JSON.stringify(usd)} is not a decimal with at most 2 fractional digits` };
  }
  let view: VaultView | undefined;
  if (vault !== undefined) {
    const v = vault as Record<string, unknown>;
    const integer = (x: unknown) => typeof x === "string" && /^(0|[1-9][0-9]*)$/.test(x);
    if (
      typeof vault !== "object" ||
      vault === null ||
      !Number.isInteger(v["decimals_offset"]) ||
      (v["decimals_offset"] as number) < 0 ||
      (v["decimals_offset"] as number) > 36 ||
      !integer(v["total_assets"]) ||
      !integer(v["total_supply"]) ||
      (v["usd_price"] !== undefined &&
        !(typeof v["usd_price"] === "string" && /^[0-9]+(\.[0-9]+)?$/.test(v["usd_price"])))
    )
      return {
        failure: `the audit view ${JSON.stringify(vault)} is not {decimals_offset: 0…36, total_assets and total_supply as integer strings, usd_price as a decimal}`,
      };
    view = {
      decimalsOffset: v["decimals_offset"] as number,
      totalAssets: BigInt(v["total_assets"] as string),
      totalSupply: BigInt(v["total_supply"] as string),
      ...(v["usd_price"] === undefined ? {} : { usdPrice: v["usd_price"] as string }),
    };
  }
  return {
    read: {
      product,
      wallet,
      answer,
      decimals: d,
      assets: assetUnits,
      usd: usdUnits,
      sharesText: shares,
      ...(view === undefined ? {} : { vault: view }),
    },
  };
}

/** Whether a position property can judge `p`: what it needs of the audit view is there. */
export function judgeable(definition: ApiPropertyDefinition, p: PositionRead): boolean {
  if (definition.needs === "vault") return p.vault !== undefined;
  if (definition.needs === "price") return p.assets === 0n || p.vault?.usdPrice !== undefined;
  return true;
}

/** `target.quote` for base units, read: the Quoter the runner hands each property. */
export function quoterFor(target: ApiTarget): Quoter {
  return async (product, units, text) => {
    const d = product.assetDecimals!;
    return readQuote(await target.quote(product, text ?? fromBaseUnits(units, d)), d);
  };
}
