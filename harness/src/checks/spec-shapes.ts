/**
 * The resources exactly as interface.md §2 and §4 describe them: field names and types, nothing
 * more. Level `spec` validates against these; level `reference` against the core's zod schemas.
 * @module
 */

import { isRecord } from "./context.js";
import { isDecimalText } from "./decimal-text.js";

export type SpecType = "string" | "integer" | "boolean" | "object" | "decimal" | "date" | "array";

export type SpecShape = Readonly<Record<string, SpecType>>;

/** interface.md §2, Product. */
export const SPEC_PRODUCT: SpecShape = {
  slug: "string",
  partner: "string",
  chain: "string",
  chain_id: "integer",
  wrapper_address: "string",
  asset_symbol: "string",
  status: "string",
  underlying_vault_address: "string",
  asset_address: "string",
  asset_decimals: "integer",
  service_fee_bps: "integer",
  partner_fee_bps: "integer",
  display_name: "string",
  description: "string",
  latest_metrics: "object",
};

/** interface.md §2, latest_metrics. */
export const SPEC_METRICS: SpecShape = {
  as_of_date: "date",
  wrapper_total_assets: "decimal",
  underlying_apy: "decimal",
  net_apy_for_user: "decimal",
};

/** interface.md §2, Position (units and precision: "not shown", so plain strings). */
export const SPEC_POSITION: SpecShape = {
  wallet_address: "string",
  product_slug: "string",
  shares: "string",
  assets: "string",
  usd_value: "string",
};

/** interface.md §2, Yield calculation. */
export const SPEC_YIELD: SpecShape = {
  principal: "string",
  annual_yield: "string",
  monthly_yield: "string",
  net_apy_for_user: "string",
};

/** interface.md §4.5, the event response. */
export const SPEC_EVENT_ACK: SpecShape = {
  success: "boolean",
  event_id: "integer",
  duplicate: "boolean",
};

/** interface.md §1, §4: `{ success: boolean, data: … }`. */
export const SPEC_ENVELOPE: SpecShape = { success: "boolean", data: "object" };

export interface ShapeReport {
  /** Present with the wrong type. */
  readonly wrong: string[];
  readonly missing: string[];
  /** Fields interface.md does not name. */
  readonly unknown: string[];
}

const DATE = /^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/;

export function hasSpecType(value: unknown, type: SpecType): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isRecord(value);
    case "array":
      return Array.isArray(value);
    case "decimal":
      return isDecimalText(value);
    case "date":
      return typeof value === "string" && DATE.test(value);
  }
}

/** Compares an object with a shape; `path` prefixes the field names in the report. */
export function checkShape(value: Record<string, unknown>, shape: SpecShape, path = ""): ShapeReport {
  const report: ShapeReport = { wrong: [], missing: [], unknown: [] };
  for (const [field, type] of Object.entries(shape)) {
    if (!(field in value)) report.missing.push(path + field);
    else if (!hasSpecType(value[field], type)) {
      report.wrong.push(`${path}${field} should be ${describe(type)}, got ${JSON.stringify(value[field])}`);
    }
  }
  for (const field of Object.keys(value)) if (!(field in shape)) report.unknown.push(path + field);
  return report;
}

function describe(type: SpecType): string {
  switch (type) {
    case "decimal":
      return "a string holding a decimal number";
    case "date":
      return "a YYYY-MM-DD date string";
    case "integer":
      return "an integer";
    case "object":
      return "an object";
    case "array":
      return "an array";
    default:
      return `a ${type}`;
  }
}
