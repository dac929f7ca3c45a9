/**
 * The checks and refusals every `PartnerAdmin` backend shares, so that a refusal reads the same
 * whatever holds the data. A value that fails its check is never echoed in a reason: a key or a
 * signing secret pasted where an id belongs must not travel further (CONTRACT §6).
 * @module
 */
import { looksLikeCredential } from "../auth/credential-shape.js";
import type { Environment } from "../auth/environment.js";
import { accept, type Refused, type Result, refuse } from "../result.js";
import { hasUnsafeCharacter } from "./terminal-text.js";

const PARTNER_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Ids are positive integers that fit a PostgreSQL bigint with room to spare. */
const CREDENTIAL_ID = /^[1-9][0-9]{0,17}$/;
const MAX_TEXT = 200;
/** What a refusal says of the characters `hasUnsafeCharacter` finds. */
const UNSAFE_WORDS =
  "without control characters, bidirectional or zero-width formatting characters, or line separators";

/**
 * A partner id as the schema and the fixtures have it.
 * @example parsePartnerId("acme").ok; // true
 * @example parsePartnerId("Acme").code; // "invalid_partner_id"
 */
export function parsePartnerId(id: string): Result<string, "invalid_partner_id"> {
  if (PARTNER_ID.test(id)) return accept(id);
  return refuse(
    "invalid_partner_id",
    'a partner id is 1 to 64 characters: lower-case letters, digits, "-" and "_", starting with a letter or digit',
  );
}

/**
 * A partner's display name: 1–200 characters, not blank, none of the characters a terminal or a
 * listing must not be handed (`hasUnsafeCharacter`: controls, bidi and zero-width formatting, line
 * separators), nothing shaped like an API key or signing secret in any case (names are printed by
 * every list).
 * @example parsePartnerName("Acme Wallet"); // { ok: true, value: "Acme Wallet" }
 */
export function parsePartnerName(name: string): Result<string, "invalid_partner_name"> {
  if (name.trim() === "" || name.length > MAX_TEXT || hasUnsafeCharacter(name)) {
    return refuse(
      "invalid_partner_name",
      `a partner name is 1 to ${MAX_TEXT} characters, not blank, ${UNSAFE_WORDS}`,
    );
  }
  if (looksLikeCredential(name.toLowerCase())) {
    return refuse("invalid_partner_name", "a partner name may not hold an API key or signing secret");
  }
  return accept(name);
}

/**
 * @example parseEnvironment("production"); // { ok: true, value: "production" }
 * @example parseEnvironment("live").reason; // 'the environment is sandbox or production, not "live"'
 */
export function parseEnvironment(environment: string): Result<Environment, "invalid_environment"> {
  if (environment === "sandbox" || environment === "production") return accept(environment);
  const shown = PARTNER_ID.test(environment) ? `, not "${environment}"` : "";
  return refuse("invalid_environment", `the environment is sandbox or production${shown}`);
}

/**
 * An optional label: at most 200 characters, the characters and credential shapes a name refuses
 * refused; undefined or "" is none.
 * @example parseLabel("mobile app"); // { ok: true, value: "mobile app" }
 */
export function parseLabel(label: string | undefined): Result<string | null, "invalid_label"> {
  if (label === undefined || label === "") return accept(null);
  if (label.length > MAX_TEXT || hasUnsafeCharacter(label)) {
    return refuse("invalid_label", `a label is at most ${MAX_TEXT} characters, ${UNSAFE_WORDS}`);
  }
  if (looksLikeCredential(label.toLowerCase()))
    return refuse("invalid_label", "a label may not hold an API key or signing secret");
  return accept(label);
}

/**
 * True for an id a backend could have given a key or a secret (decimal digits); anything else
 * names nothing.
 * @example isCredentialId("12"); // true
 */
export function isCredentialId(id: string): boolean {
  return CREDENTIAL_ID.test(id);
}

/** The refusals, worded once. */
export const adminRefusals = {
  partnerNotFound: (partnerId: string): Refused<"partner_not_found"> =>
    refuse("partner_not_found", `there is no partner ${quoteId(partnerId, PARTNER_ID)}`),
  partnerExists: (partnerId: string): Refused<"partner_exists"> =>
    refuse("partner_exists", `partner "${partnerId}" already exists; nothing was changed`),
  partnerNotVerified: (partnerId: string): Refused<"partner_not_verified"> =>
    refuse(
      "partner_not_verified",
      `partner "${partnerId}" is not verified: production keys are issued only to a verified partner; nothing was changed`,
    ),
  alreadyInProduction: (partnerId: string, keyId: string): Refused<"already_in_production"> =>
    refuse(
      "already_in_production",
      `partner "${partnerId}" is already in production (active production key ${keyId}): promotion issues ` +
        "a partner's first production key only; nothing was changed",
    ),
  keyNotFound: (keyId: string): Refused<"key_not_found"> =>
    refuse("key_not_found", `there is no API key ${quoteId(keyId, CREDENTIAL_ID)}`),
  secretNotFound: (partnerId: string, secretId: string): Refused<"secret_not_found"> =>
    refuse(
      "secret_not_found",
      `partner "${partnerId}" has no signing secret ${quoteId(secretId, CREDENTIAL_ID)}`,
    ),
} as const;

/** An id is echoed only when it has the shape of one (so never a pasted key or secret). */
function quoteId(id: string, shape: RegExp): string {
  return shape.test(id) ? `with id "${id}"` : "with that id (not an id: ids are shown by the list commands)";
}
