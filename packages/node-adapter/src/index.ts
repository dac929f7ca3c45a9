/**
 * @partner-yield/node-adapter: the partner API on plain node:http.
 * @module
 */
// The demo credentials live in the core (@partner-yield/core/demo); kept here for existing imports.
export { DEMO_CREDENTIALS } from "@partner-yield/core/demo";
export {
  answerFromCore,
  BodyAlreadyReadError,
  type CoreAnswer,
  type CoreAnswerOptions,
} from "./answer-from-core.js";
export {
  type ConnectionGuard,
  type ConnectionLimits,
  DEFAULT_CROWDED_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  defaultMaxConnections,
  guardConnections,
} from "./connections.js";
export { DEFAULT_FIXTURES_DIR, loadFixtureDir, readFixtureDir } from "./fixture-dir.js";
export { nodeHmacSha256, nodeSha256 } from "./hmac.js";
export {
  type AnsweredRequest,
  createListener,
  type ListenerOptions,
  type ListenerTarget,
  type PartnerListener,
  type ResponseOutcomeFields,
} from "./listener.js";
export { type PlainRequestOptions, toPlainRequest } from "./plain-request.js";
export { type BodyState, createBodyReader, newBodyState } from "./request-body.js";
export {
  defaultInstanceId,
  type ErrorLogEntry,
  type LogEntry,
  type LoggedError,
  type LogLevel,
  levelOf,
  logInstance,
  logPath,
  type RequestLogEntry,
  type RequestLogOption,
  resolveErrorLog,
  resolveStoreLog,
  STACK_WINDOW_MS,
  type StoreLogEntry,
  setLogInstance,
  storeLogEntry,
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
export { settlesWithin } from "./settles-within.js";
