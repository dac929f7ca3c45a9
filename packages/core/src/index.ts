/**
 * @partner-yield/core — the partner yield-products API, framework-agnostic (no `node:*` import).
 * @module
 */

export * from "./auth/api-key.js";
export * from "./auth/signature.js";
export * from "./encoding/canonical-json.js";
export * from "./evm/address.js";
export * from "./evm/chains.js";
export * from "./fixtures/load-fixtures.js";
export * from "./http/body.js";
export * from "./http/date-time.js";
export * from "./http/errors.js";
export * from "./http/fetch.js";
export * from "./http/openapi.js";
export * from "./http/partner-api.js";
export type * from "./http/partner-api-options.js";
export type * from "./http/plain-request.js";
export * from "./http/schemas.js";
export * from "./math/decimal.js";
export * from "./math/exact-numbers.js";
export * from "./math/integer-root.js";
export * from "./math/yield-math.js";
export * from "./stores/event-store.js";
export * from "./stores/key-store.js";
export * from "./stores/partner-store.js";
export * from "./stores/product-source.js";
export * from "./stores/rate-limiter.js";
export * from "./stores/store-errors.js";
