/**
 * The published yield vectors (CONTRACT §2: `yield-calc` quotes and `convertToAssets`), computed
 * with exact integer arithmetic by a separate implementation: one copy, read by core's tests, the
 * harness's oracle tests and any team checking its own math.
 * @module
 */
import vectors from "./yield-vectors.json" with { type: "json" };

/** One `yield-calc` quote: the inputs as the API takes them, the answer digit for digit. */
export interface YieldCalcVector {
  readonly amount: string;
  readonly asset_decimals: number;
  readonly underlying_apy: string;
  readonly service_fee_bps: number;
  readonly partner_fee_bps: number;
  readonly principal: string;
  readonly net_apy_for_user: string;
  readonly annual_yield: string;
  readonly monthly_yield: string;
}

/** One ERC-4626 `convertToAssets` in base units, with the wrapper's decimals offset. */
export interface ConvertToAssetsVector {
  readonly shares: string;
  readonly total_assets: string;
  readonly total_supply: string;
  readonly decimals_offset: number;
  readonly assets: string;
}

/**
 * @example YIELD_VECTORS.yield_calc.length; // every published quote
 */
export const YIELD_VECTORS: {
  readonly source: string;
  readonly yield_calc: readonly YieldCalcVector[];
  readonly convert_to_assets_base_units: readonly ConvertToAssetsVector[];
} = vectors;
