/**
 * @partner-yield/core — the partner yield-products API, framework-agnostic (no `node:*` import).
 * Every public name is listed here on purpose (test/public-exports.json snapshots the list); the
 * yield math for auditors is its own entry point, `@partner-yield/core/math`.
 * @module
 */

// Partners, keys and signing secrets for a partner manager (CONTRACT §4)
export {
  adminRefusals,
  isCredentialId,
  parseEnvironment,
  parseLabel,
  parsePartnerId,
  parsePartnerName,
} from "./admin/admin-input.js";
export {
  issueApiKey,
  issueSigningSecret,
  lastFourOf,
  type NewKeyMaterial,
} from "./admin/issue-credentials.js";
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
export {
  ECHO_MAX_LENGTH,
  echoInput,
  escapeUnsafe,
  hasUnsafeCharacter,
} from "./admin/terminal-text.js";
export {
  API_KEY_PREFIXES,
  type ApiKeyRefusal,
  generateApiKey,
  hashApiKey,
  parseApiKey,
} from "./auth/api-key.js";
export { looksLikeCredential, redactCredentials } from "./auth/credential-shape.js";
// Keys, secrets and signatures (CONTRACT §4)
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
export { generateSigningSecret, isSigningSecret } from "./auth/signing-secret.js";
export { type CanonicalJsonRefusal, canonicalJson } from "./encoding/canonical-json.js";
// EVM addresses and chains
export { type AddressRefusal, parseAddress, toChecksumAddress } from "./evm/address.js";
export { EVM_CHAINS } from "./evm/chains.js";
export { FixtureError } from "./fixtures/fixture-error.js";
// Fixture files → in-memory stores
export {
  FIXTURE_FILES,
  type FixtureFileName,
  type LoadFixturesOptions,
  loadFixtures,
  type SandboxData,
} from "./fixtures/load-fixtures.js";
export { DEFAULT_BASE_PATH } from "./http/base-path.js";
export { BodyTooLargeError, InvalidBodyError } from "./http/body.js";
export {
  type AddressBucketOptions,
  addressBucket,
  DEFAULT_IPV6_PREFIX_LENGTH,
} from "./http/client-bucket.js";
// Errors: the one table of codes → statuses (CONTRACT §6)
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
export { type FetchHandlerOptions, toFetchHandler } from "./http/fetch.js";
export { acceptableRequestId } from "./http/incoming-request-id.js";
export { buildOpenApiDocument, OPENAPI_DOCUMENT_VERSION, type OpenApiOptions } from "./http/openapi.js";
// The API: one entry point, request in, response out
export { createPartnerApi, type PartnerApi } from "./http/partner-api.js";
export type { ErrorAnswer, ErrorHook, PartnerApiOptions } from "./http/partner-api-options.js";
export type {
  BodyReader,
  PartnerApiHandler,
  PlainRequest,
  PlainResponse,
  ResponseOutcome,
} from "./http/plain-request.js";
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
export {
  type BatchHandler,
  CONSUMER_NAME,
  type ConsumerBatch,
  type ConsumerState,
  checkConsumerName,
  checkEventId,
  checkLimit,
  type EventConsumerPort,
  type EventFilter,
  type IterateOptions,
  iterateEvents,
  MemoryEventConsumers,
  matchesFilter,
  type PollOptions,
  type ProcessOptions,
  type RunOptions,
  runConsumer,
  sleep,
} from "./stores/event-consumer.js";
export {
  type AppendResult,
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_MAX_EVENTS,
  type EventCredentials,
  type EventStore,
  eventMemoryBytes,
  MemoryEventStore,
  type MemoryEventStoreOptions,
  type NewEvent,
  type StoredEvent,
} from "./stores/event-store.js";
export { type ApiKeyFormat, partnerYieldKeyFormat } from "./stores/key-format.js";
export { type ApiKeyRecord, type ApiKeyStatus, type KeyStore, MemoryKeyStore } from "./stores/key-store.js";
export { isPromiseLike, type MaybePromise } from "./stores/maybe-promise.js";
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
  PRODUCT_STATUSES,
  type ProductMetrics,
  type ProductRecord,
  type ProductSource,
} from "./stores/product-source.js";
export {
  DEFAULT_MAX_FAILED_AUTH_ADDRESSES,
  FAILED_AUTH_KEY_PREFIX,
  FAILED_AUTH_OVERFLOW_KEY,
  MemoryRateLimiter,
  type MemoryRateLimiterOptions,
  type RateDecision,
  type RateLimiter,
} from "./stores/rate-limiter.js";
// Store ports and their in-memory versions
export { StoreUnavailableError } from "./stores/store-unavailable-error.js";
