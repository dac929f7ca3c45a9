/**
 * Every conformance check, by category. IDs are stable: a retired check's ID is never given to
 * another rule. The runner sends the response checks' own requests first, then runs the scenarios
 * in this order (the rate-limit probe, which spends the quota, is the last scenario), and judges
 * every response with the response checks as it is recorded.
 * @module
 */
import { AUTH_CHECKS } from "./auth.js";
import type { CheckDefinition } from "./definition.js";
import { ERROR_CHECKS } from "./errors.js";
import { EVENT_CHECKS } from "./events.js";
import { POSITION_CHECKS } from "./position.js";
import { PRODUCT_CHECKS } from "./products.js";
import { RATE_LIMIT_CHECKS } from "./rate-limit.js";
import { SCHEMA_CHECKS } from "./schema.js";
import { YIELD_CHECKS } from "./yield-calc.js";

export const CHECKS: readonly CheckDefinition[] = [
  ...AUTH_CHECKS,
  ...PRODUCT_CHECKS,
  ...POSITION_CHECKS,
  ...YIELD_CHECKS,
  ...EVENT_CHECKS,
  ...ERROR_CHECKS,
  ...SCHEMA_CHECKS,
  ...RATE_LIMIT_CHECKS,
];

/** The check with this ID. */
export function checkById(id: string): CheckDefinition | undefined {
  return CHECKS.find((c) => c.id === id);
}
