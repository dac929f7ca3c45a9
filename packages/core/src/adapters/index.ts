/**
 * @partner-yield/core/adapters — what the code around the API reuses (the node adapter, the
 * operator CLI, the harness): client-address buckets for per-address limits, the rule for request
 * ids chosen outside the core, credential redaction for logs, and terminal escaping for what a CLI
 * echoes. A team that mounts the API with `toFetchHandler`, `@partner-yield/express` or
 * `@partner-yield/fastify` needs none of it; the API and its request/response types are in
 * `@partner-yield/core`.
 * @module
 */

// Terminal text: what a CLI echoes of its input (no escape sequence, no key or secret)
export { ECHO_MAX_LENGTH, echoInput, escapeUnsafe } from "../admin/terminal-text.js";
// Logs: never a key or a signing secret
export { looksLikeCredential, redactCredentials } from "../auth/credential-shape.js";
// Client addresses: one IPv6 customer is one bucket, not 2^64 (CONTRACT §4)
export {
  type AddressBucketOptions,
  addressBucket,
  DEFAULT_IPV6_PREFIX_LENGTH,
} from "../http/client-bucket.js";
// Request ids from outside the core (a client's X-Request-Id): short, plain, never a credential
export { acceptableRequestId } from "../http/incoming-request-id.js";
