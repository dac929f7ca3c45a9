/**
 * @partner-yield/core/math — the yield math auditors check (CONTRACT §1–§2), exact BigInt fixed
 * point throughout: amounts in base units, rates scaled by 10^18 (WAD). The same functions the API
 * answers with; the property suite (`pnpm properties`) replays the contract's invariants on them.
 * @module
 */
export type { Accepted, Refused, Result } from "../result.js";
export { unwrap } from "../result.js";
export {
  type AmountRefusal,
  CANONICAL_DECIMAL,
  type DecimalRefusal,
  formatUnits,
  isCanonicalDecimal,
  MAX_UINT256,
  parseAmount,
  parseDecimal,
} from "./decimal.js";
export { integerNthRoot } from "./integer-root.js";
export {
  annualYield,
  convertToAssets,
  floorDiv,
  monthlyGrowthFactor,
  monthlyYield,
  netApy,
  type QuoteInput,
  quoteYield,
  RATE_DECIMALS,
  ROOT_SCALE,
  usdValueCents,
  WAD,
  type YieldQuote,
} from "./yield-math.js";
