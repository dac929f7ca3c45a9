/**
 * @partner-yield/core — the partner yield-products API, framework-agnostic (no `node:*` import).
 * @module
 */
export * from "./address.js";
export * from "./api.js";
export * from "./api-key.js";
export type * from "./api-options.js";
export * from "./body.js";
export * from "./canonical-json.js";
export * from "./chains.js";
export * from "./date-time.js";
export * from "./decimal.js";
export * from "./errors.js";
export * from "./event-store.js";
export * from "./exact-numbers.js";
export * from "./fetch.js";
export * from "./fixtures.js";
export type * from "./http-types.js";
export * from "./integer-root.js";
export * from "./key-store.js";
export * from "./openapi.js";
export * from "./partner-store.js";
export * from "./rate-limiter.js";
export * from "./schemas.js";
export * from "./signature.js";
export * from "./sources.js";
export * from "./store-errors.js";
export * from "./yield-math.js";
