/**
 * What an API key (`ypk_test_…`, `ypk_live_…`) or a signing secret (`whsec_…`) looks like in
 * text (CONTRACT §4 formats): one pattern for every place that must never echo or store one.
 * @module
 */

const CREDENTIAL_PREFIX = /ypk_(?:test|live)_|whsec_/;
const CREDENTIAL = /(ypk_(?:test|live)_|whsec_)[A-Za-z0-9_-]*/g;

/**
 * Whether `text` holds something shaped like an API key or a signing secret.
 * @example looksLikeCredential("label ypk_live_abc"); // true
 */
export function looksLikeCredential(text: string): boolean {
  return CREDENTIAL_PREFIX.test(text);
}

/**
 * Masks what looks like an API key or a signing secret (CONTRACT §4 formats). A detail or pointer
 * built from the request (a member name, a parameter) could otherwise echo one (CONTRACT §6).
 * @example redactCredentials("/body/ypk_test_abc"); // "/body/ypk_test_[redacted]"
 */
export function redactCredentials(text: string): string {
  return text.includes("ypk_") || text.includes("whsec_") ? text.replace(CREDENTIAL, "$1[redacted]") : text;
}
