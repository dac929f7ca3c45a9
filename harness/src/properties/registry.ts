/**
 * The auditors' property suite: the invariants of CONTRACT §2 as plain data (ID, title, the
 * statement, what it proves) plus the fast-check property that tests it against the core. The CLI
 * (`partner-yield-conformance properties`) and the harness's own test run the same list.
 * @module
 */
import {
  annualYield,
  convertToAssets,
  formatUnits,
  isCanonicalDecimal,
  monthlyGrowthFactor,
  monthlyYield,
  netApy,
  parseAmount,
  quoteYield,
  ROOT_SCALE,
  usdValueCents,
  WAD,
} from "@partner-yield/core/math";
import fc from "fast-check";
import {
  ascendingPair,
  assetDecimals,
  feePair,
  nonNegativeRateWad,
  nonPositiveRateWad,
  positiveRateWad,
  priceWad,
  principalUnits,
  rateWad,
  vaultState,
} from "./arbitraries.js";

export interface PropertyDefinition {
  /** Stable: `P-01` … */
  readonly id: string;
  readonly title: string;
  /** The invariant in notation: P principal, a underlying APY, n net APY, f = s + p fees, D decimals. */
  readonly statement: string;
  /** What it proves, for an auditor. */
  readonly proves: string;
  readonly source: string;
  /** A fresh fast-check property. */
  property(): fc.IProperty<unknown[]>;
}

/** Fails the run with a readable message (fast-check prints it with the counterexample). */
function holds(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

const S = ROOT_SCALE;
const S12 = S ** 12n;
const BPS = 10_000n;

type Prop = fc.IProperty<unknown[]>;
const as = (p: unknown): Prop => p as Prop;

export const PROPERTIES: readonly PropertyDefinition[] = [
  {
    id: "P-01",
    title: "Fees never raise the yield",
    statement: "a > 0 ⇒ n ≤ a",
    proves: "Whatever the fee split, the user is never quoted more than the vault earns.",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(fc.property(positiveRateWad, feePair, (a, [s, p]) => holds(netApy(a, s, p) <= a, "n > a"))),
  },
  {
    id: "P-02",
    title: "A non-negative APY stays non-negative after fees",
    statement: "a ≥ 0 ⇒ n ≥ 0",
    proves: "Fees (at most 100 %) can take the whole gain, never more: no fee turns a gain into a loss.",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(fc.property(nonNegativeRateWad, feePair, (a, [s, p]) => holds(netApy(a, s, p) >= 0n, "n < 0"))),
  },
  {
    id: "P-03",
    title: "No fee is charged on a loss",
    statement: "a ≤ 0 ⇒ n = a",
    proves:
      "Fees are performance fees: a vault that loses passes the loss through unchanged, never deepened by a fee.",
    source: "CONTRACT §2 (net_apy_for_user)",
    property: () =>
      as(
        fc.property(nonPositiveRateWad, feePair, (a, [s, p]) =>
          holds(netApy(a, s, p) === a, "n ≠ a on a loss"),
        ),
      ),
  },
  {
    id: "P-04",
    title: "Net APY is the fee formula truncated to 18 digits",
    statement: "a > 0 ⇒ n × 10000 ≤ a × (10000 − f) < (n + 10^−18) × 10000",
    proves: "The net APY is exactly a × (10000 − f) / 10000, cut (never rounded up) at the 18th decimal.",
    source: "CONTRACT §2 (net_apy_for_user)",
    property: () =>
      as(
        fc.property(positiveRateWad, feePair, (a, [s, p]) => {
          const n = netApy(a, s, p);
          const exact = a * (BPS - BigInt(s + p));
          holds(
            n * BPS <= exact && exact < (n + 1n) * BPS,
            `n = ${n} is not the truncation of ${exact} / 10000`,
          );
        }),
      ),
  },
  {
    id: "P-05",
    title: "Net APY never rises with a fee",
    statement: "f₁ ≤ f₂ ⇒ n(a, f₂) ≤ n(a, f₁)",
    proves: "Raising a fee can only lower (or keep) what the user is quoted, for gains and losses alike.",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(
        fc.property(rateWad, feePair, feePair, (a, x, y) => {
          const [low, high] = x[0] + x[1] <= y[0] + y[1] ? [x, y] : [y, x];
          holds(netApy(a, high[0], high[1]) <= netApy(a, low[0], low[1]), "a higher fee gave a higher n");
        }),
      ),
  },
  {
    id: "P-06",
    title: "annual_yield is exact to the last base unit",
    statement: "annual ≤ P × n < annual + 10^−D",
    proves:
      "The annual figure is P × n rounded down to the asset's smallest unit: never overstated, never short by a whole unit.",
    source: "CONTRACT §2 (annual_yield)",
    property: () =>
      as(
        fc.property(principalUnits, rateWad, (p, n) => {
          const annual = annualYield(p, n);
          holds(
            annual * WAD <= p * n && p * n < (annual + 1n) * WAD,
            `annual ${annual} is not floor(${p} × ${n} / 10^18)`,
          );
        }),
      ),
  },
  {
    id: "P-07",
    title: "The monthly rate compounds to at most the APY, and is the largest that does",
    statement: "R = floor(S × (1 + n)^(1/12)), S = 10^36: R^12 ≤ S^12 × (1 + n) < (R + 1)^12",
    proves:
      "m = (R − S) / S is the compound monthly rate: twelve months of m never exceed the yearly n ((1 + m)^12 ≤ 1 + n), and it is the exact integer 12th root, not an approximation.",
    source: "CONTRACT §2 (monthly_yield)",
    property: () =>
      as(
        fc.property(rateWad, (n) => {
          const r = monthlyGrowthFactor(n);
          holds(
            r ** 12n * WAD <= S12 * (WAD + n),
            "R^12 > S^12 (1 + n): the monthly rate compounds past the APY",
          );
          holds((r + 1n) ** 12n * WAD > S12 * (WAD + n), "R + 1 also fits: R is not the floor of the root");
        }),
      ),
  },
  {
    id: "P-08",
    title: "monthly_yield is exact to the last base unit",
    statement: "monthly × S ≤ P × (R − S) < (monthly + 1) × S, in base units",
    proves: "The monthly figure is P × m rounded down to the asset's smallest unit.",
    source: "CONTRACT §2 (monthly_yield)",
    property: () =>
      as(
        fc.property(principalUnits, rateWad, (p, n) => {
          const monthly = monthlyYield(p, n);
          const scaled = p * (monthlyGrowthFactor(n) - S);
          holds(
            monthly * S <= scaled && scaled < (monthly + 1n) * S,
            `monthly ${monthly} is not floor(P (R − S) / S)`,
          );
        }),
      ),
  },
  {
    id: "P-09",
    title: "A month earns at most a twelfth of the year",
    statement: "n ≥ 0 ⇒ 0 ≤ monthly ≤ annual / 12 (as 12 × monthly ≤ annual in base units)",
    proves:
      "The monthly figure is the compound equivalent, which never exceeds simple APY / 12; it is not APY / 12 rounded up.",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(
        fc.property(principalUnits, nonNegativeRateWad, (p, n) => {
          const monthly = monthlyYield(p, n);
          holds(monthly >= 0n, "monthly < 0");
          holds(12n * monthly <= annualYield(p, n), "12 × monthly > annual");
        }),
      ),
  },
  {
    id: "P-10",
    title: "Yield is monotone in the principal",
    statement: "P₁ ≤ P₂ ⇒ y(P₁) ≤ y(P₂) for n ≥ 0 (≥ for n < 0), for annual and monthly",
    proves: "Investing more never yields less (or, on a loss, never loses less).",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(
        fc.property(ascendingPair(principalUnits), rateWad, ([p1, p2], n) => {
          const [a1, a2, m1, m2] = [
            annualYield(p1, n),
            annualYield(p2, n),
            monthlyYield(p1, n),
            monthlyYield(p2, n),
          ];
          if (n >= 0n) holds(a1 <= a2 && m1 <= m2, "more principal, less yield");
          else holds(a1 >= a2 && m1 >= m2, "more principal, smaller loss");
        }),
      ),
  },
  {
    id: "P-11",
    title: "Yield is monotone in the APY",
    statement:
      "a₁ ≤ a₂ ⇒ n(a₁) ≤ n(a₂), annual(a₁) ≤ annual(a₂), monthly(a₁) ≤ monthly(a₂) (same P, same fees)",
    proves: "A better vault is never quoted as a worse deal.",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(
        fc.property(principalUnits, ascendingPair(rateWad), feePair, (p, [a1, a2], [s, f]) => {
          const [n1, n2] = [netApy(a1, s, f), netApy(a2, s, f)];
          holds(n1 <= n2, "higher APY, lower net APY");
          holds(annualYield(p, n1) <= annualYield(p, n2), "higher APY, lower annual yield");
          holds(monthlyYield(p, n1) <= monthlyYield(p, n2), "higher APY, lower monthly yield");
        }),
      ),
  },
  {
    id: "P-12",
    title: "Yield is floor-superadditive",
    statement: "y(P₁) + y(P₂) ≤ y(P₁ + P₂) ≤ y(P₁) + y(P₂) + 1 unit, for annual and monthly",
    proves:
      "Splitting a deposit in two never earns more than making it whole, and loses at most one base unit to rounding.",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(
        fc.property(principalUnits, principalUnits, rateWad, (p1, p2, n) => {
          for (const y of [annualYield, monthlyYield]) {
            const parts = y(p1, n) + y(p2, n);
            const whole = y(p1 + p2, n);
            holds(parts <= whole && whole <= parts + 1n, `${y.name}: parts ${parts}, whole ${whole}`);
          }
        }),
      ),
  },
  {
    id: "P-13",
    title: "Formatting then parsing an amount is the identity",
    statement: "parseAmount(formatUnits(u, D), D) = u for every 1 ≤ u ≤ 2^256 − 1",
    proves:
      "No amount changes on its way to the wire and back: the principal echoed is exactly the one computed with.",
    source: "CONTRACT §2 (invariants), §1",
    property: () =>
      as(
        fc.property(principalUnits, assetDecimals, (u, d) => {
          const text = formatUnits(u, d);
          const parsed = parseAmount(text, d);
          holds(
            parsed.ok && parsed.value === u,
            `${u} at ${d} decimals → ${text} → ${JSON.stringify(parsed, (_, v) => (typeof v === "bigint" ? String(v) : v))}`,
          );
        }),
      ),
  },
  {
    id: "P-14",
    title: "Results do not depend on how the amount was written",
    statement: 'quote("1.50") = quote("1.5"): trailing zeros within D digits change nothing',
    proves: "Two clients spelling the same amount differently get the same figures.",
    source: "CONTRACT §2 (invariants), §3",
    property: () =>
      as(
        fc.property(principalUnits, assetDecimals, rateWad, feePair, fc.nat(24), (u, d, a, [s, f], extra) => {
          const canonical = formatUnits(u, d);
          const written = canonical.includes(".") ? canonical.length - canonical.indexOf(".") - 1 : 0;
          const zeros = Math.min(extra, d - written);
          fc.pre(zeros > 0);
          const padded = `${canonical}${written === 0 ? "." : ""}${"0".repeat(zeros)}`;
          const quote = (text: string) => {
            const parsed = parseAmount(text, d);
            if (!parsed.ok) throw new Error(`${text} refused: ${parsed.reason}`);
            return JSON.stringify(
              quoteYield({
                amountUnits: parsed.value,
                assetDecimals: d,
                underlyingApyWad: a,
                serviceFeeBps: s,
                partnerFeeBps: f,
              }),
            );
          };
          holds(quote(padded) === quote(canonical), `${padded} and ${canonical} quote differently`);
        }),
      ),
  },
  {
    id: "P-15",
    title: "Every output is a canonical decimal",
    statement: "every field of a quote matches ^-?(0|[1-9][0-9]*)(\\.[0-9]*[1-9])?$, never -0",
    proves:
      "Figures on the wire have one spelling each: no exponent, no padding zeros, nothing a client could misread.",
    source: "CONTRACT §1, §2 (invariants)",
    property: () =>
      as(
        fc.property(principalUnits, assetDecimals, rateWad, feePair, (u, d, a, [s, f]) => {
          const quote = quoteYield({
            amountUnits: u,
            assetDecimals: d,
            underlyingApyWad: a,
            serviceFeeBps: s,
            partnerFeeBps: f,
          });
          for (const [field, value] of Object.entries(quote))
            holds(isCanonicalDecimal(value), `${field} = ${value}`);
          holds(quote.principal === formatUnits(u, d), "principal is not the amount");
        }),
      ),
  },
  {
    id: "P-16",
    title: "A position's assets are the floor of its virtual share",
    statement: "assets × (supply + 10^δ) ≤ shares × (total + 1) < (assets + 1) × (supply + 10^δ)",
    proves:
      "assets is ERC-4626 convertToAssets with OpenZeppelin's virtual shares, rounded down: a position is never overstated.",
    source: "CONTRACT §2 (Position)",
    property: () =>
      as(
        fc.property(fc.bigInt({ min: 0n, max: 10n ** 40n }), vaultState, (shares, v) => {
          const assets = convertToAssets(shares, v.totalAssets, v.totalSupply, v.decimalsOffset);
          const den = v.totalSupply + 10n ** BigInt(v.decimalsOffset);
          const num = shares * (v.totalAssets + 1n);
          holds(assets * den <= num && num < (assets + 1n) * den, `assets ${assets} is not the floor`);
        }),
      ),
  },
  {
    id: "P-17",
    title: "assets never exceeds the exact share of total_assets",
    statement:
      "supply ≤ total × 10^δ ⇒ assets × supply ≤ shares × total; and shares ≤ supply ⇒ assets ≤ total",
    proves:
      "While the share price is above the virtual share's 1/10^δ, no holder is shown more than their exact share; and at any price no holder is shown more than the vault holds.",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(
        fc.property(
          fc.bigInt({ min: 1n, max: 10n ** 30n }),
          fc.bigInt({ min: 1n, max: 10n ** 40n }),
          fc.integer({ min: 0, max: 18 }),
          fc.bigInt({ min: 0n, max: 10n ** 40n }),
          (total, rawSupply, delta, rawShares) => {
            const supply = 1n + (rawSupply % (total * 10n ** BigInt(delta)));
            const shares = rawShares % (supply + 1n);
            const assets = convertToAssets(shares, total, supply, delta);
            holds(
              assets * supply <= shares * total,
              `assets ${assets} exceeds ${shares} × ${total} / ${supply}`,
            );
            holds(assets <= total, `assets ${assets} exceeds total ${total}`);
          },
        ),
      ),
  },
  {
    id: "P-18",
    title: "assets is monotone in shares",
    statement: "shares₁ ≤ shares₂ ⇒ assets(shares₁) ≤ assets(shares₂)",
    proves: "Holding more shares never shows fewer assets.",
    source: "CONTRACT §2 (invariants)",
    property: () =>
      as(
        fc.property(ascendingPair(fc.bigInt({ min: 0n, max: 10n ** 40n })), vaultState, ([s1, s2], v) =>
          holds(
            convertToAssets(s1, v.totalAssets, v.totalSupply, v.decimalsOffset) <=
              convertToAssets(s2, v.totalAssets, v.totalSupply, v.decimalsOffset),
            "more shares, fewer assets",
          ),
        ),
      ),
  },
  {
    id: "P-19",
    title: "usd_value is the value rounded down to the cent",
    statement: "cents × 10^D ≤ assets × price × 100 < (cents + 1) × 10^D (price per whole unit)",
    proves: "The USD value shown is never more than the assets are worth, and never a whole cent less.",
    source: "CONTRACT §2 (Position)",
    property: () =>
      as(
        fc.property(fc.bigInt({ min: 0n, max: 10n ** 40n }), assetDecimals, priceWad, (assets, d, price) => {
          const cents = usdValueCents(assets, d, price);
          const den = 10n ** BigInt(d) * WAD;
          const num = assets * price * 100n;
          holds(cents * den <= num && num < (cents + 1n) * den, `cents ${cents} is not the floor`);
        }),
      ),
  },
];
