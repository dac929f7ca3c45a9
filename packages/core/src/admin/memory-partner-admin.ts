/**
 * `PartnerAdmin` in memory, for tests and for an embedding team's first dashboard. It holds the
 * partners, keys and secrets itself and serves them to the API through `keys` and `partners`
 * (the read ports), so a change is seen by the very next request.
 * @module
 */
import { API_KEY_PREFIXES } from "../auth/api-key.js";
import type { Environment } from "../auth/environment.js";
import { systemRandom } from "../auth/random.js";
import { accept, type Result } from "../result.js";
import type { ApiKeyRecord, ApiKeyStatus, KeyStore } from "../stores/key-store.js";
import type { Partner, PartnerStore } from "../stores/partner-store.js";
import {
  adminRefusals,
  isCredentialId,
  parseEnvironment,
  parseLabel,
  parsePartnerId,
  parsePartnerName,
} from "./admin-input.js";
import { issueApiKey, issueSigningSecret, lastFourOf } from "./issue-credentials.js";
import type {
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
} from "./partner-admin.js";

export interface MemoryPartnerAdminOptions {
  /**
   * Partners to start with (e.g. `loadFixtures(files).partnerList`), with their signing secrets:
   * taken in as the PostgreSQL import takes them — unverified.
   */
  readonly partners?: Iterable<Partner> | undefined;
  /** Keys to start with (e.g. `loadFixtures(files).keyRecords`): bare hashes, so no last four. */
  readonly keys?: Iterable<ApiKeyRecord> | undefined;
  /** Milliseconds since the epoch; default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Random bytes for keys and secrets; default Web Crypto. */
  readonly random?: ((n: number) => Uint8Array) | undefined;
  /** SHA-256 for key hashes; default @noble/hashes. */
  readonly sha256?: ((bytes: Uint8Array) => Uint8Array) | undefined;
}

interface PartnerEntry {
  readonly id: string;
  readonly name: string;
  verified: boolean;
  readonly createdAt: string;
  readonly rateLimits: Partner["rateLimits"];
}

interface KeyEntry {
  readonly id: string;
  readonly keyHash: string;
  readonly partnerId: string;
  readonly environment: Environment;
  status: ApiKeyStatus;
  readonly lastFour: string | null;
  readonly label: string | null;
  readonly createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface SecretEntry {
  readonly id: string;
  readonly partnerId: string;
  readonly secret: string;
  status: SigningSecretStatus;
  readonly createdAt: string;
  revokedAt: string | null;
}

/**
 * @example
 * const data = loadFixtures(files);
 * const admin = new MemoryPartnerAdmin({ partners: data.partnerList, keys: data.keyRecords });
 * const api = createPartnerApi({ environment: "sandbox", ...data, keys: admin.keys, partners: admin.partners });
 * await admin.revokeKey("1"); // the next request with that key is 401 invalid_api_key
 */
export class MemoryPartnerAdmin implements PartnerAdmin {
  /** The API's `KeyStore` over this admin's keys. */
  readonly keys: KeyStore;
  /** The API's `PartnerStore` over this admin's partners and their active signing secrets. */
  readonly partners: PartnerStore;

  readonly #partners = new Map<string, PartnerEntry>();
  readonly #keys: KeyEntry[] = [];
  readonly #keysByHash = new Map<string, KeyEntry>();
  readonly #secrets: SecretEntry[] = [];
  readonly #now: () => number;
  readonly #random: (n: number) => Uint8Array;
  readonly #sha256: ((bytes: Uint8Array) => Uint8Array) | undefined;
  #nextId = 1;

  constructor(options: MemoryPartnerAdminOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? systemRandom;
    this.#sha256 = options.sha256;
    for (const partner of options.partners ?? []) {
      this.#partners.set(partner.id, {
        id: partner.id,
        name: partner.name,
        verified: false,
        createdAt: this.#time(),
        rateLimits: partner.rateLimits,
      });
      for (const secret of partner.signingSecrets) this.#addSecret(partner.id, secret);
    }
    for (const key of options.keys ?? []) {
      this.#addKey({
        keyHash: key.keyHash,
        partnerId: key.partnerId,
        environment: key.environment,
        status: key.status,
        lastFour: null,
        label: key.label ?? null,
      });
    }
    this.keys = {
      findByHash: (keyHash) => Promise.resolve(this.#findByHash(keyHash)),
      close: () => Promise.resolve(),
    };
    this.partners = {
      getPartner: (partnerId) => Promise.resolve(this.#servedPartner(partnerId)),
      close: () => Promise.resolve(),
    };
  }

  addPartner(
    partner: NewPartner,
  ): Promise<Result<PartnerSummary, "invalid_partner_id" | "invalid_partner_name" | "partner_exists">> {
    const id = parsePartnerId(partner.id);
    if (!id.ok) return Promise.resolve(id);
    const name = parsePartnerName(partner.name);
    if (!name.ok) return Promise.resolve(name);
    if (this.#partners.has(id.value)) return Promise.resolve(adminRefusals.partnerExists(id.value));
    const entry: PartnerEntry = {
      id: id.value,
      name: name.value,
      verified: partner.verified === true,
      createdAt: this.#time(),
      rateLimits: undefined,
    };
    this.#partners.set(entry.id, entry);
    return Promise.resolve(accept(this.#partnerSummary(entry)));
  }

  listPartners(): Promise<readonly PartnerSummary[]> {
    const ids = [...this.#partners.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return Promise.resolve(ids.map((id) => this.#partnerSummary(this.#partners.get(id)!)));
  }

  getPartner(partnerId: string): Promise<Result<PartnerSummary, "partner_not_found">> {
    const entry = this.#partners.get(partnerId);
    if (entry === undefined) return Promise.resolve(adminRefusals.partnerNotFound(partnerId));
    return Promise.resolve(accept(this.#partnerSummary(entry)));
  }

  markPartnerVerified(partnerId: string): Promise<Result<PartnerSummary, "partner_not_found">> {
    const entry = this.#partners.get(partnerId);
    if (entry === undefined) return Promise.resolve(adminRefusals.partnerNotFound(partnerId));
    entry.verified = true;
    return Promise.resolve(accept(this.#partnerSummary(entry)));
  }

  createKey(
    key: NewApiKey,
  ): Promise<
    Result<
      IssuedApiKey,
      "partner_not_found" | "invalid_environment" | "invalid_label" | "partner_not_verified"
    >
  > {
    // Input first, then state (as the API orders its checks): a bad environment is said as such.
    const environment = parseEnvironment(key.environment);
    if (!environment.ok) return Promise.resolve(environment);
    const label = parseLabel(key.label);
    if (!label.ok) return Promise.resolve(label);
    const partner = this.#partners.get(key.partnerId);
    if (partner === undefined) return Promise.resolve(adminRefusals.partnerNotFound(key.partnerId));
    if (environment.value === "production" && !partner.verified) {
      return Promise.resolve(adminRefusals.partnerNotVerified(partner.id));
    }
    return Promise.resolve(accept(this.#issueKey(partner.id, environment.value, label.value)));
  }

  promote(
    partnerId: string,
    options: { readonly label?: string | undefined } = {},
  ): Promise<
    Result<
      IssuedApiKey,
      "partner_not_found" | "invalid_label" | "partner_not_verified" | "already_in_production"
    >
  > {
    const label = parseLabel(options.label);
    if (!label.ok) return Promise.resolve(label);
    const partner = this.#partners.get(partnerId);
    if (partner === undefined) return Promise.resolve(adminRefusals.partnerNotFound(partnerId));
    if (!partner.verified) return Promise.resolve(adminRefusals.partnerNotVerified(partner.id));
    const live = this.#keys.find(
      (k) => k.partnerId === partner.id && k.environment === "production" && k.status === "active",
    );
    if (live !== undefined) return Promise.resolve(adminRefusals.alreadyInProduction(partner.id, live.id));
    return Promise.resolve(accept(this.#issueKey(partner.id, "production", label.value)));
  }

  listKeys(
    partnerId: string,
    filter: { readonly environment?: string | undefined } = {},
  ): Promise<Result<readonly ApiKeySummary[], "partner_not_found" | "invalid_environment">> {
    let environment: Environment | undefined;
    if (filter.environment !== undefined) {
      const parsed = parseEnvironment(filter.environment);
      if (!parsed.ok) return Promise.resolve(parsed);
      environment = parsed.value;
    }
    if (!this.#partners.has(partnerId)) return Promise.resolve(adminRefusals.partnerNotFound(partnerId));
    const keys = this.#keys.filter(
      (k) => k.partnerId === partnerId && (environment === undefined || k.environment === environment),
    );
    return Promise.resolve(accept(keys.map(keySummary)));
  }

  revokeKey(keyId: string): Promise<Result<Revocation<ApiKeySummary>, "key_not_found">> {
    const entry = isCredentialId(keyId) ? this.#keys.find((k) => k.id === keyId) : undefined;
    if (entry === undefined) return Promise.resolve(adminRefusals.keyNotFound(keyId));
    const changed = entry.status === "active";
    if (changed) {
      entry.status = "revoked";
      entry.revokedAt = this.#time();
    }
    const activeLeft = this.#keys.filter(
      (k) => k.partnerId === entry.partnerId && k.environment === entry.environment && k.status === "active",
    ).length;
    return Promise.resolve(accept({ summary: keySummary(entry), changed, activeLeft }));
  }

  createSigningSecret(partnerId: string): Promise<Result<IssuedSigningSecret, "partner_not_found">> {
    if (!this.#partners.has(partnerId)) return Promise.resolve(adminRefusals.partnerNotFound(partnerId));
    const { secret } = issueSigningSecret(this.#random);
    const entry = this.#addSecret(partnerId, secret);
    return Promise.resolve(accept({ signingSecret: secret, summary: secretSummary(entry) }));
  }

  listSigningSecrets(
    partnerId: string,
  ): Promise<Result<readonly SigningSecretSummary[], "partner_not_found">> {
    if (!this.#partners.has(partnerId)) return Promise.resolve(adminRefusals.partnerNotFound(partnerId));
    return Promise.resolve(accept(this.#secrets.filter((s) => s.partnerId === partnerId).map(secretSummary)));
  }

  revokeSigningSecret(
    partnerId: string,
    secretId: string,
  ): Promise<Result<Revocation<SigningSecretSummary>, "partner_not_found" | "secret_not_found">> {
    if (!this.#partners.has(partnerId)) return Promise.resolve(adminRefusals.partnerNotFound(partnerId));
    const entry = isCredentialId(secretId)
      ? this.#secrets.find((s) => s.id === secretId && s.partnerId === partnerId)
      : undefined;
    if (entry === undefined) return Promise.resolve(adminRefusals.secretNotFound(partnerId, secretId));
    const changed = entry.status === "active";
    if (changed) {
      entry.status = "revoked";
      entry.revokedAt = this.#time();
    }
    const activeLeft = this.#activeSecrets(partnerId).length;
    return Promise.resolve(accept({ summary: secretSummary(entry), changed, activeLeft }));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  #time(): string {
    return new Date(this.#now()).toISOString();
  }

  #issueKey(partnerId: string, environment: Environment, label: string | null): IssuedApiKey {
    const material = issueApiKey(environment, this.#random, this.#sha256);
    const entry = this.#addKey({
      keyHash: material.keyHash,
      partnerId,
      environment,
      status: "active",
      lastFour: material.lastFour,
      label,
    });
    return { apiKey: material.apiKey, summary: keySummary(entry) };
  }

  #addKey(
    key: Pick<KeyEntry, "keyHash" | "partnerId" | "environment" | "status" | "lastFour" | "label">,
  ): KeyEntry {
    const createdAt = this.#time();
    const entry: KeyEntry = {
      ...key,
      id: String(this.#nextId++),
      createdAt,
      lastUsedAt: null,
      revokedAt: key.status === "revoked" ? createdAt : null,
    };
    this.#keys.push(entry);
    this.#keysByHash.set(entry.keyHash, entry);
    return entry;
  }

  #addSecret(partnerId: string, secret: string): SecretEntry {
    const entry: SecretEntry = {
      id: String(this.#nextId++),
      partnerId,
      secret,
      status: "active",
      createdAt: this.#time(),
      revokedAt: null,
    };
    this.#secrets.push(entry);
    return entry;
  }

  #activeSecrets(partnerId: string): SecretEntry[] {
    return this.#secrets.filter((s) => s.partnerId === partnerId && s.status === "active");
  }

  #findByHash(keyHash: string): ApiKeyRecord | undefined {
    const entry = this.#keysByHash.get(keyHash);
    if (entry === undefined) return undefined;
    if (entry.status === "active") entry.lastUsedAt = this.#time();
    return {
      keyHash: entry.keyHash,
      id: entry.id,
      partnerId: entry.partnerId,
      environment: entry.environment,
      status: entry.status,
      ...(entry.label === null ? {} : { label: entry.label }),
    };
  }

  #servedPartner(partnerId: string): Partner | undefined {
    const entry = this.#partners.get(partnerId);
    if (entry === undefined) return undefined;
    return {
      id: entry.id,
      name: entry.name,
      rateLimits: entry.rateLimits,
      signingSecrets: this.#activeSecrets(partnerId).map((s) => s.secret),
    };
  }

  #partnerSummary(entry: PartnerEntry): PartnerSummary {
    const active = (environment: Environment) =>
      this.#keys.filter(
        (k) => k.partnerId === entry.id && k.environment === environment && k.status === "active",
      ).length;
    return {
      id: entry.id,
      name: entry.name,
      verified: entry.verified,
      createdAt: entry.createdAt,
      activeKeys: { sandbox: active("sandbox"), production: active("production") },
      activeSigningSecrets: this.#activeSecrets(entry.id).length,
    };
  }
}

function keySummary(entry: KeyEntry): ApiKeySummary {
  return {
    id: entry.id,
    partnerId: entry.partnerId,
    environment: entry.environment,
    status: entry.status,
    prefix: API_KEY_PREFIXES[entry.environment],
    lastFour: entry.lastFour,
    label: entry.label,
    createdAt: entry.createdAt,
    lastUsedAt: entry.lastUsedAt,
    revokedAt: entry.revokedAt,
  };
}

function secretSummary(entry: SecretEntry): SigningSecretSummary {
  return {
    id: entry.id,
    partnerId: entry.partnerId,
    status: entry.status,
    lastFour: lastFourOf(entry.secret),
    createdAt: entry.createdAt,
    revokedAt: entry.revokedAt,
  };
}
