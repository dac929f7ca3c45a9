/**
 * @partner-yield/core — the partner yield-products API, framework-agnostic (no `node:*` import),
 * as a team that embeds it uses it: the API, its request and response types, the error table and
 * problem rendering, the wire format as schemas, keys and signatures, the store ports with their
 * record types and in-memory versions, the fixture loader and `Result`. Every public name is
 * listed here on purpose (test/architecture/public-exports.json snapshots the list). Other entry
 * points: `/math` (the yield math for auditors), `/testing` (the store conformance suites),
 * `/backends` (what a store of your own reuses), `/adapters` (what a server or a CLI around the API
 * reuses).
 * @module
 */

// Partners, keys and signing secrets for a partner manager (CONTRACT §4)
export { MemoryPartnerAdmin, type MemoryPartnerAdminOptions } from "./admin/memory-partner-admin.js";
export type {
  AdminInputRefusal,
  AdminNotFound,
  AdminRefusal,
  AdminRuleRefusal,
  ApiKeySummary,
  IssuedApiKey,
  IssuedSigningSecret,
  NewApiKey,
  NewPartner,
  PartnerAdmin,
  PartnerSummary,
  Revocation,
  SigningSecretStatus,
  SigningSecretSummary,
} from "./admin/partner-admin.js";
// Keys, secrets and signatures (CONTRACT §4)
export {
  API_KEY_PREFIXES,
  type ApiKeyRefusal,
  generateApiKey,
  hashApiKey,
  parseApiKey,
} from "./auth/api-key.js";
export type { Environment } from "./auth/environment.js";
export {
  type HmacPort,
  nobleHmacSha256,
  type PreparedHmac,
  parseSignatureHeader,
  type SignatureHeaderRefusal,
  SignatureVerifier,
  signBody,
} from "./auth/signature.js";
export { generateSigningSecret } from "./auth/signing-secret.js";
// EVM addresses and chains
export { type AddressRefusal, parseAddress, toChecksumAddress } from "./evm/address.js";
export { EVM_CHAINS } from "./evm/chains.js";
// Fixture files → in-memory stores
export { FixtureError } from "./fixtures/fixture-error.js";
export {
  FIXTURE_FILES,
  type FixtureFileName,
  type LoadFixturesOptions,
  loadFixtures,
  type SandboxData,
} from "./fixtures/load-fixtures.js";
// What a body reader rejects with, so the core answers 413 or 400
export { BodyTooLargeError, InvalidBodyError } from "./http/body.js";
// Errors: the one table of codes → statuses, answered as problem+json (CONTRACT §6)
export {
  ApiError,
  ERROR_CODES,
  ERRORS,
  type ErrorCode,
  type FieldError,
  PROBLEM_TYPE_BASE,
  type ProblemBody,
  problemBody,
} from "./http/errors.js";
// The API: one entry point, request in, response out; the request and response types
export { type FetchHandlerOptions, toFetchHandler } from "./http/fetch.js";
export { buildOpenApiDocument, type OpenApiOptions } from "./http/openapi.js";
export { createPartnerApi, type PartnerApi } from "./http/partner-api.js";
export type { ErrorAnswer, ErrorHook, PartnerApiOptions } from "./http/partner-api-options.js";
export type {
  BodyReader,
  PartnerApiHandler,
  PlainRequest,
  PlainResponse,
  ResponseOutcome,
} from "./http/plain-request.js";
// The problem response of an error, for a mount that answers before or after the core
export { problemResponse } from "./http/reply.js";
// The wire format as zod schemas (responses, the event, the problem)
export {
  EVENT_TYPES,
  EventAck,
  EventType,
  LatestMetrics,
  PartnerEvent,
  Position,
  PositionResponse,
  Problem,
  Product,
  ProductListResponse,
  ProductResponse,
  ProductStatus,
  YieldCalculation,
  YieldCalculationResponse,
} from "./http/schemas.js";
// How core reports an invalid input
export type { Accepted, Refused, Result } from "./result.js";
export { accept, refuse, unwrap } from "./result.js";
// Processing accepted events downstream: named consumers with a durable checkpoint
export {
  type BatchHandler,
  CONSUMER_NAME,
  type ConsumerBatch,
  type ConsumerState,
  type EventConsumerPort,
  type EventFilter,
  type IterateOptions,
  iterateEvents,
  MemoryEventConsumers,
  type PollOptions,
  type ProcessOptions,
  type RunOptions,
  runConsumer,
} from "./stores/event-consumer.js";
// Store ports, their record types and their in-memory versions
export {
  type AppendResult,
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_MAX_EVENTS,
  type EventCredentials,
  type EventStore,
  MemoryEventStore,
  type MemoryEventStoreOptions,
  type NewEvent,
  type StoredEvent,
} from "./stores/event-store.js";
export { type ApiKeyFormat, partnerYieldKeyFormat } from "./stores/key-format.js";
export { type ApiKeyRecord, type ApiKeyStatus, type KeyStore, MemoryKeyStore } from "./stores/key-store.js";
export type { MaybePromise } from "./stores/maybe-promise.js";
export { MemoryPartnerStore, type Partner, type PartnerStore } from "./stores/partner-store.js";
export {
  type Holding,
  MemoryPositionSource,
  type PositionSource,
  type VaultState,
} from "./stores/position-source.js";
export { type AssetPrice, MemoryPriceSource, type PriceSource } from "./stores/price-source.js";
export {
  MemoryProductSource,
  type ProductMetrics,
  type ProductRecord,
  type ProductSource,
} from "./stores/product-source.js";
export {
  MemoryRateLimiter,
  type MemoryRateLimiterOptions,
  type RateDecision,
  type RateLimiter,
} from "./stores/rate-limiter.js";
export { StoreUnavailableError } from "./stores/store-unavailable-error.js";
