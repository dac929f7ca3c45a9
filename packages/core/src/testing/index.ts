/**
 * @partner-yield/core/testing — the store conformance suites, written once and run against every
 * backend (the in-memory defaults, PostgreSQL, Redis, or a team's own). Each takes the runner's
 * `describe` and `test` (node:test, vitest and bun:test all fit) and a factory for the store.
 * Beside them, the published vectors (yield math, HMAC-SHA256) and the fast-check settings the
 * property tests share (`fcParams`).
 *
 * @example
 * import { describe, test } from "vitest"; // or node:test, or bun:test
 * import { runEventStoreSuite } from "@partner-yield/core/testing";
 * runEventStoreSuite({ name: "my store", makeStore: async () => new MyEventStore(db), describe, test });
 * @module
 */
export { assertDeepEqual, assertEqual, assertTrue, SuiteAssertionError } from "./assertions.js";
export {
  type DataStoreSuiteOptions,
  type DataStores,
  runKeyStoreSuite,
  runPartnerStoreSuite,
  runProductSourceSuite,
  type StoreSeed,
} from "./data-store-suite.js";
export { type EventStoreSuiteOptions, newEvent, runEventStoreSuite } from "./event-store-suite.js";
export { HMAC_VECTORS, type HmacVector, type WebhookSignatureVector } from "./hmac-vectors.js";
export {
  type AdministeredStores,
  type PartnerAdminSuiteOptions,
  runPartnerAdminSuite,
} from "./partner-admin-suite.js";
export { CI_SEED, fcParams, type PropertyRunSettings } from "./property-runs.js";
export { type RateLimiterSuiteOptions, runRateLimiterSuite } from "./rate-limiter-suite.js";
export { type Closable, type SuiteOptions, seededRandom, type TestFunctions, uniqueTag } from "./suite.js";
export { type ConvertToAssetsVector, YIELD_VECTORS, type YieldCalcVector } from "./yield-vectors.js";
