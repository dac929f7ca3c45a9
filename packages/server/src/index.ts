/**
 * @partner-yield/server: the operator's server, the `partner-yield` command (`serve`, `db`,
 * `partners`, `keys`, `secrets`, `events`, `audit`), and the pieces it is built from.
 * @module
 */
export { type BannerData, type BannerInput, formatBanner } from "./banner.js";
export { type ApiKeyRow, apiKeyRow, ForeignApiKeyError } from "./key-import.js";
export { DEFAULT_OPENAPI_PATH, openApiJson, writeOpenApiDocument } from "./openapi-file.js";
export { type ServerLogEntry, serverLogEntry } from "./server-log.js";
export { type StoreWatch, type StoreWatchOptions, watchStores } from "./store-watch.js";
export {
  otlpEndpoint,
  type RequestTracing,
  type TracedPorts,
  traceHandler,
  tracePorts,
} from "./tracing.js";
