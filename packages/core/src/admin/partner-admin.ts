/**
 * The partner manager's port: partners, their API keys and their signing secrets, from creation to
 * revocation (CONTRACT §4; the decisions in docs/contract.md, "Keys and secrets"). A backend
 * implements it next to the read ports the API uses (`KeyStore`, `PartnerStore`): every change is
 * served by every instance on its next request. `MemoryPartnerAdmin` is the in-memory version;
 * `@partner-yield/store-postgres` has `PostgresPartnerAdmin`; `runPartnerAdminSuite`
 * (`@partner-yield/core/testing`) proves a backend.
 *
 * Inputs come from outside (a form, a command line): every method checks them and answers a
 * `Result`; only a backend that cannot be reached throws (`StoreUnavailableError`).
 * @module
 */
import type { Environment } from "../auth/environment.js";
import type { Result } from "../result.js";
import type { ApiKeyStatus } from "../stores/key-store.js";

/** A partner as a partner manager sees it. Times are RFC 3339 UTC (`2026-11-20T10:15:00.000Z`). */
export interface PartnerSummary {
  readonly id: string;
  readonly name: string;
  /** Only a verified partner is issued production keys. */
  readonly verified: boolean;
  readonly createdAt: string;
  /** Active API keys per environment. */
  readonly activeKeys: Readonly<Record<Environment, number>>;
  readonly activeSigningSecrets: number;
}

/** An API key without the key: what `listKeys` shows (the key itself is never stored). */
export interface ApiKeySummary {
  /** Decimal digits, unique in the backend; what `revokeKey` takes. */
  readonly id: string;
  readonly partnerId: string;
  readonly environment: Environment;
  readonly status: ApiKeyStatus;
  /** `ypk_test_` or `ypk_live_`. */
  readonly prefix: string;
  /** The key's last four characters; null for a key imported as a bare hash (fixtures). */
  readonly lastFour: string | null;
  readonly label: string | null;
  readonly createdAt: string;
  /** A use at most a minute before the latest one; null when never used. */
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

/** A new API key: `apiKey` is the only copy of the key there will ever be. Show it once. */
export interface IssuedApiKey {
  readonly apiKey: string;
  readonly summary: ApiKeySummary;
}

export type SigningSecretStatus = "active" | "revoked";

/** A signing secret without the secret. */
export interface SigningSecretSummary {
  readonly id: string;
  readonly partnerId: string;
  readonly status: SigningSecretStatus;
  /** The secret's last four characters, to tell secrets apart. */
  readonly lastFour: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

/** A new signing secret (`whsec_…`): hand it to the partner once; it is not shown again. */
export interface IssuedSigningSecret {
  readonly signingSecret: string;
  readonly summary: SigningSecretSummary;
}

/** The outcome of a revocation. Revoking is final, and revoking twice changes nothing. */
export interface Revocation<Summary> {
  readonly summary: Summary;
  /** False when it was already revoked (its `revokedAt` is the first revocation's). */
  readonly changed: boolean;
  /**
   * Active credentials of the same kind left: keys of the partner in the key's environment, or
   * the partner's signing secrets. 0 means the partner can no longer authenticate there, or sign.
   */
  readonly activeLeft: number;
}

export interface NewPartner {
  /** `^[a-z0-9][a-z0-9_-]{0,63}$`, as in the fixtures. */
  readonly id: string;
  /** Shown in `Product.partner`: 1–200 characters, no control characters. */
  readonly name: string;
  /** Default false. */
  readonly verified?: boolean | undefined;
}

export interface NewApiKey {
  readonly partnerId: string;
  /** `sandbox` or `production` (a string: it usually comes from a form or a command line). */
  readonly environment: string;
  /** Free text for operators, at most 200 characters. */
  readonly label?: string | undefined;
}

/** Why an input was refused (bad input: fix it and try again). */
export type AdminInputRefusal =
  | "invalid_partner_id"
  | "invalid_partner_name"
  | "invalid_environment"
  | "invalid_label";
/** What was named does not exist. */
export type AdminNotFound = "partner_not_found" | "key_not_found" | "secret_not_found";
/** A rule refused the change; nothing was changed. */
export type AdminRuleRefusal = "partner_exists" | "partner_not_verified" | "already_in_production";
/** Every refusal code of `PartnerAdmin`. */
export type AdminRefusal = AdminInputRefusal | AdminNotFound | AdminRuleRefusal;

/**
 * Partners, keys and signing secrets.
 * @example
 * const admin = new MemoryPartnerAdmin(); // or new PostgresPartnerAdmin(pool)
 * await admin.addPartner({ id: "acme", name: "Acme Wallet" });
 * const issued = await admin.createKey({ partnerId: "acme", environment: "sandbox" });
 * if (issued.ok) show(issued.value.apiKey); // once: only its hash is kept
 */
export interface PartnerAdmin {
  addPartner(
    partner: NewPartner,
  ): Promise<Result<PartnerSummary, "invalid_partner_id" | "invalid_partner_name" | "partner_exists">>;
  /** Every partner, ordered by id. */
  listPartners(): Promise<readonly PartnerSummary[]>;
  getPartner(partnerId: string): Promise<Result<PartnerSummary, "partner_not_found">>;
  /** Marks the partner verified (it may then hold production keys). Marking twice changes nothing. */
  markPartnerVerified(partnerId: string): Promise<Result<PartnerSummary, "partner_not_found">>;

  /**
   * A new key for the partner in `environment`; a production key only for a verified partner
   * (`partner_not_verified`, and nothing changes).
   */
  createKey(
    key: NewApiKey,
  ): Promise<
    Result<
      IssuedApiKey,
      "partner_not_found" | "invalid_environment" | "invalid_label" | "partner_not_verified"
    >
  >;
  /**
   * Moves a partner to production: its first production key, only when it is verified and holds
   * no active production key (else `partner_not_verified` / `already_in_production`, and nothing
   * changes). Two promotions at once issue one key.
   */
  promote(
    partnerId: string,
    options?: { readonly label?: string | undefined },
  ): Promise<
    Result<
      IssuedApiKey,
      "partner_not_found" | "invalid_label" | "partner_not_verified" | "already_in_production"
    >
  >;
  /** The partner's keys, oldest first, optionally of one environment. Never the keys themselves. */
  listKeys(
    partnerId: string,
    filter?: { readonly environment?: string | undefined },
  ): Promise<Result<readonly ApiKeySummary[], "partner_not_found" | "invalid_environment">>;
  /** Revokes a key for good: the next request with it is `401 invalid_api_key` on every instance. */
  revokeKey(keyId: string): Promise<Result<Revocation<ApiKeySummary>, "key_not_found">>;

  /** A new active signing secret; the partner's other active secrets keep verifying (rotation). */
  createSigningSecret(partnerId: string): Promise<Result<IssuedSigningSecret, "partner_not_found">>;
  /** The partner's signing secrets, oldest first. Never the secrets themselves. */
  listSigningSecrets(
    partnerId: string,
  ): Promise<Result<readonly SigningSecretSummary[], "partner_not_found">>;
  /**
   * Revokes one of the partner's secrets for good: an event signed with it is
   * `401 invalid_signature` from the next request on, on every instance.
   */
  revokeSigningSecret(
    partnerId: string,
    secretId: string,
  ): Promise<Result<Revocation<SigningSecretSummary>, "partner_not_found" | "secret_not_found">>;

  close(): Promise<void>;
}
