/**
 * @partner-yield/core/backends — what a backend of your own reuses so that it answers like the
 * in-memory ones: the input checks and refusals every `PartnerAdmin` shares, a new key or secret
 * with what is stored of it, the argument checks of an `EventConsumerPort`, and the key names of
 * the failed-authentication limit a `RateLimiter` must recognise. store-postgres and store-redis
 * are built on it. The ports themselves, and their record types, are in `@partner-yield/core`.
 * @module
 */

// A PartnerAdmin backend: checks and refusals worded once for every backend (CONTRACT §4)
export {
  adminRefusals,
  isCredentialId,
  parseEnvironment,
  parseLabel,
  parsePartnerId,
  parsePartnerName,
} from "../admin/admin-input.js";
export { issueApiKey, issueSigningSecret, type NewKeyMaterial } from "../admin/issue-credentials.js";
// An EventConsumerPort backend: the same RangeErrors for the same bad arguments, and the abortable
// wait between polls
export { checkConsumerName, checkEventId, checkLimit, sleep } from "../stores/event-consumer.js";
// A RateLimiter backend: which keys are failed authentications, and where the overflow is counted
export {
  DEFAULT_MAX_FAILED_AUTH_ADDRESSES,
  FAILED_AUTH_KEY_PREFIX,
  FAILED_AUTH_OVERFLOW_KEY,
} from "../stores/rate-limiter.js";
