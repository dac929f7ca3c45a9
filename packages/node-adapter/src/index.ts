/**
 * @partner-yield/node-adapter: the partner API on plain node:http, and the `partner-yield` CLI.
 * @module
 */
export {
  answerFromCore,
  BodyAlreadyReadError,
  type CoreAnswer,
  type CoreAnswerOptions,
} from "./answer-from-core.js";
export { type BannerData, type BannerInput, formatBanner } from "./banner.js";
export {
  type ConnectionGuard,
  type ConnectionLimits,
  DEFAULT_CROWDED_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  defaultMaxConnections,
  guardConnections,
} from "./connections.js";
export { DEMO_CREDENTIALS } from "./demo.js";
export { DEFAULT_FIXTURES_DIR, loadFixtureDir, readFixtureDir } from "./fixture-dir.js";
export { nodeHmacSha256, nodeSha256 } from "./hmac.js";
export { type ApiKeyRow, apiKeyRow, ForeignApiKeyError } from "./key-import.js";
export {
  createListener,
  type ListenerOptions,
  type ListenerTarget,
  type PartnerListener,
} from "./listener.js";
export { DEFAULT_OPENAPI_PATH, openApiJson, writeOpenApiDocument } from "./openapi-file.js";
export { type PlainRequestOptions, toPlainRequest } from "./plain-request.js";
export { type BodyState, createBodyReader, newBodyState } from "./request-body.js";
export {
  defaultInstanceId,
  type ErrorLogEntry,
  type LogEntry,
  type LoggedError,
  type LogLevel,
  levelOf,
  logPath,
  type RequestLogEntry,
  type RequestLogOption,
  resolveStoreLog,
  STACK_WINDOW_MS,
  type StoreLogEntry,
  setLogInstance,
} from "./request-log.js";
export { splitTarget } from "./request-target.js";
export {
  createNodePartnerApi,
  DEFAULT_TIMEOUTS,
  type NodeApiOptions,
  type RunningServer,
  type ServerTimeouts,
  type StartServerOptions,
  startServer,
} from "./server.js";
export { type ServerLogEntry, serverLogEntry } from "./server-log.js";
export { type StoreWatch, type StoreWatchOptions, watchStores } from "./store-watch.js";
export {
  otlpEndpoint,
  type RequestTracing,
  type TracedPorts,
  traceHandler,
  tracePorts,
} from "./tracing.js";
