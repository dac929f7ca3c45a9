/**
 * Every conformance check, in the order a run executes them. IDs are stable: a retired check's ID
 * is never given to another rule.
 * @module
 */
import { AUTH_CHECKS } from "./auth.js";
import { ERROR_CHECKS, FINAL_ERROR_CHECKS } from "./errors.js";
import { EVENT_CHECKS } from "./events.js";
import { POSITION_CHECKS } from "./position.js";
import { PRODUCT_CHECKS } from "./products.js";
import { RATE_LIMIT_CHECKS } from "./rate-limit.js";
import { SCHEMA_CHECKS } from "./schema.js";
import type { CheckDefinition } from "./types.js";
import { YIELD_CHECKS } from "./yield-calc.js";

/**
 * The registry. Cross-cutting checks (ERR-*, SCH-06, RL-01) come after the others so they see
 * every response recorded before them; the rate-limit probe comes next to last because it spends the quota, and ERR-08 last, to see every
 * response of the run.
 */
export const CHECKS: readonly CheckDefinition[] = [
  ...AUTH_CHECKS,
  ...PRODUCT_CHECKS,
  ...POSITION_CHECKS,
  ...YIELD_CHECKS,
  ...EVENT_CHECKS,
  ...ERROR_CHECKS,
  ...SCHEMA_CHECKS,
  ...RATE_LIMIT_CHECKS,
  ...FINAL_ERROR_CHECKS,
];

/** The check with this ID. */
export function checkById(id: string): CheckDefinition | undefined {
  return CHECKS.find((c) => c.id === id);
}
