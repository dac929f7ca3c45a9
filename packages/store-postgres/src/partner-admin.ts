/**
 * The core's `PartnerAdmin` on PostgreSQL: partners, API keys (their SHA-256 hash, prefix and last
 * four characters — never the key) and signing secrets, in the tables the API reads on every
 * request, so each change is served by every instance on its next request. The rules that need
 * two statements hold under concurrency: a production key is inserted only while the partner row
 * says verified, and a promotion locks the partner row (which every key insert for it must share,
 * through its foreign key) between its check and its insert.
 */
import {
  API_KEY_PREFIXES,
  type ApiKeySummary,
  accept,
  type Environment,
  type IssuedApiKey,
  type IssuedSigningSecret,
  type NewApiKey,
  type NewPartner,
  type PartnerAdmin,
  type PartnerSummary,
  type Result,
  type Revocation,
  type SigningSecretStatus,
  type SigningSecretSummary,
} from "@partner-yield/core";
import {
  adminRefusals,
  isCredentialId,
  issueApiKey,
  issueSigningSecret,
  parseEnvironment,
  parseLabel,
  parsePartnerId,
  parsePartnerName,
} from "@partner-yield/core/backends";
import type pg from "pg";
import { guarded, unavailable } from "./errors.js";
import { type SecretKeyring, secretColumns } from "./secret-keys.js";
import { inTransaction } from "./transaction.js";

export interface PostgresPartnerAdminOptions {
  /** Random bytes for keys and secrets; default Web Crypto. */
  readonly random?: ((n: number) => Uint8Array) | undefined;
  /** SHA-256 for key hashes; default @noble/hashes. */
  readonly sha256?: ((bytes: Uint8Array) => Uint8Array) | undefined;
  /** Called by `close()`; default nothing (the pool is yours). */
  readonly release?: (() => Promise<void>) | undefined;
  /** Seals new signing secrets (AES-256-GCM, migration 0006); undefined: stored in plain text. */
  readonly secretKeys?: SecretKeyring | undefined;
}

interface PartnerRow {
  id: string;
  name: string;
  verified: boolean;
  created_at: Date;
  sandbox_keys: number;
  production_keys: number;
  secrets: number;
}

interface KeyRow {
  id: string;
  partner_id: string;
  environment: Environment;
  status: "active" | "revoked";
  last_four: string | null;
  label: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

interface SecretRow {
  id: string;
  partner_id: string;
  status: SigningSecretStatus;
  last_four: string;
  created_at: Date;
  revoked_at: Date | null;
}

const PARTNER_COLUMNS = `p.id, p.name, p.verified, p.created_at,
  (select count(*) from api_keys k where k.partner_id = p.id and k.status = 'active' and k.environment = 'sandbox')::int as sandbox_keys,
  (select count(*) from api_keys k where k.partner_id = p.id and k.status = 'active' and k.environment = 'production')::int as production_keys,
  (select count(*) from signing_secrets s where s.partner_id = p.id and s.status = 'active')::int as secrets`;
const KEY_COLUMNS =
  "id::text as id, partner_id, environment, status, last_four, label, created_at, last_used_at, revoked_at";
const SECRET_COLUMNS = "id::text as id, partner_id, status, last_four, created_at, revoked_at";

/**
 * @example
 * const admin = new PostgresPartnerAdmin(pool); // the pool of openPostgresStores, or your own
 * const issued = await admin.createKey({ partnerId: "acme", environment: "sandbox" });
 */
export class PostgresPartnerAdmin implements PartnerAdmin {
  readonly #pool: pg.Pool;
  readonly #random: ((n: number) => Uint8Array) | undefined;
  readonly #sha256: ((bytes: Uint8Array) => Uint8Array) | undefined;
  readonly #release: () => Promise<void>;
  readonly #secretKeys: SecretKeyring | undefined;

  constructor(pool: pg.Pool, options: PostgresPartnerAdminOptions = {}) {
    this.#pool = pool;
    this.#random = options.random;
    this.#sha256 = options.sha256;
    this.#release = options.release ?? (() => Promise.resolve());
    this.#secretKeys = options.secretKeys;
  }

  async addPartner(
    partner: NewPartner,
  ): Promise<Result<PartnerSummary, "invalid_partner_id" | "invalid_partner_name" | "partner_exists">> {
    const id = parsePartnerId(partner.id);
    if (!id.ok) return id;
    const name = parsePartnerName(partner.name);
    if (!name.ok) return name;
    const inserted = await this.#query<{ id: string }>(
      "adding a partner",
      "insert into partners (id, name, verified) values ($1, $2, $3) on conflict (id) do nothing returning id",
      [id.value, name.value, partner.verified === true],
    );
    if (inserted.length === 0) return adminRefusals.partnerExists(id.value);
    // Partners are never deleted: the row just inserted is there.
    return accept(partnerSummary((await this.#partnerRow(id.value))!));
  }

  async listPartners(): Promise<readonly PartnerSummary[]> {
    const rows = await this.#query<PartnerRow>(
      "listing partners",
      `select ${PARTNER_COLUMNS} from partners p order by p.id collate "C"`,
    );
    return rows.map(partnerSummary);
  }

  async getPartner(partnerId: string): Promise<Result<PartnerSummary, "partner_not_found">> {
    const row = await this.#partnerRow(partnerId);
    return row === undefined ? adminRefusals.partnerNotFound(partnerId) : accept(partnerSummary(row));
  }

  async markPartnerVerified(partnerId: string): Promise<Result<PartnerSummary, "partner_not_found">> {
    const updated = await this.#query<{ id: string }>(
      "marking a partner verified",
      "update partners set verified = true where id = $1 returning id",
      [partnerId],
    );
    if (updated.length === 0) return adminRefusals.partnerNotFound(partnerId);
    return this.getPartner(partnerId);
  }

  async createKey(
    key: NewApiKey,
  ): Promise<
    Result<
      IssuedApiKey,
      "partner_not_found" | "invalid_environment" | "invalid_label" | "partner_not_verified"
    >
  > {
    const environment = parseEnvironment(key.environment);
    if (!environment.ok) return environment;
    const label = parseLabel(key.label);
    if (!label.ok) return label;
    const material = issueApiKey(environment.value, this.#random, this.#sha256);
    // One statement: the key is inserted only while the partner exists and, for production, is verified.
    const rows = await this.#query<KeyRow>(
      "creating an API key",
      `insert into api_keys (partner_id, environment, key_hash, display_prefix, last_four, label)
       select id, $2, $3, $4, $5, $6 from partners where id = $1 and ($2 = 'sandbox' or verified)
       returning ${KEY_COLUMNS}`,
      [key.partnerId, environment.value, material.keyHash, material.prefix, material.lastFour, label.value],
    );
    const row = rows[0];
    if (row !== undefined) return accept({ apiKey: material.apiKey, summary: keySummary(row) });
    const partner = await this.#partnerRow(key.partnerId);
    if (partner === undefined) return adminRefusals.partnerNotFound(key.partnerId);
    return adminRefusals.partnerNotVerified(partner.id);
  }

  async promote(
    partnerId: string,
    options: { readonly label?: string | undefined } = {},
  ): Promise<
    Result<
      IssuedApiKey,
      "partner_not_found" | "invalid_label" | "partner_not_verified" | "already_in_production"
    >
  > {
    const label = parseLabel(options.label);
    if (!label.ok) return label;
    return this.#transaction("promoting a partner", async (client) => {
      // The row lock serialises promotions of this partner, and any key insert for it (the
      // foreign key check takes a share lock on the same row).
      const partner = await client.query<{ id: string; verified: boolean }>(
        "select id, verified from partners where id = $1 for update",
        [partnerId],
      );
      const row = partner.rows[0];
      if (row === undefined) return adminRefusals.partnerNotFound(partnerId);
      if (!row.verified) return adminRefusals.partnerNotVerified(row.id);
      const live = await client.query<{ id: string }>(
        `select id::text as id from api_keys
         where partner_id = $1 and environment = 'production' and status = 'active' order by id limit 1`,
        [row.id],
      );
      if (live.rows[0] !== undefined) return adminRefusals.alreadyInProduction(row.id, live.rows[0].id);
      const material = issueApiKey("production", this.#random, this.#sha256);
      const inserted = await client.query<KeyRow>(
        `insert into api_keys (partner_id, environment, key_hash, display_prefix, last_four, label)
         values ($1, 'production', $2, $3, $4, $5) returning ${KEY_COLUMNS}`,
        [row.id, material.keyHash, material.prefix, material.lastFour, label.value],
      );
      return accept({ apiKey: material.apiKey, summary: keySummary(inserted.rows[0]!) });
    });
  }

  async listKeys(
    partnerId: string,
    filter: { readonly environment?: string | undefined } = {},
  ): Promise<Result<readonly ApiKeySummary[], "partner_not_found" | "invalid_environment">> {
    let environment: Environment | null = null;
    if (filter.environment !== undefined) {
      const parsed = parseEnvironment(filter.environment);
      if (!parsed.ok) return parsed;
      environment = parsed.value;
    }
    if ((await this.#partnerRow(partnerId)) === undefined) return adminRefusals.partnerNotFound(partnerId);
    const rows = await this.#query<KeyRow>(
      "listing API keys",
      `select ${KEY_COLUMNS} from api_keys where partner_id = $1 and ($2::text is null or environment = $2)
       order by id`,
      [partnerId, environment],
    );
    return accept(rows.map(keySummary));
  }

  async revokeKey(keyId: string): Promise<Result<Revocation<ApiKeySummary>, "key_not_found">> {
    if (!isCredentialId(keyId)) return adminRefusals.keyNotFound(keyId);
    const revoked = await this.#query<KeyRow>(
      "revoking an API key",
      `update api_keys set status = 'revoked', revoked_at = now() where id = $1 and status = 'active'
       returning ${KEY_COLUMNS}`,
      [keyId],
    );
    const row =
      revoked[0] ??
      (
        await this.#query<KeyRow>("reading an API key", `select ${KEY_COLUMNS} from api_keys where id = $1`, [
          keyId,
        ])
      )[0];
    if (row === undefined) return adminRefusals.keyNotFound(keyId);
    const left = await this.#query<{ n: number }>(
      "counting active API keys",
      "select count(*)::int as n from api_keys where partner_id = $1 and environment = $2 and status = 'active'",
      [row.partner_id, row.environment],
    );
    return accept({ summary: keySummary(row), changed: revoked.length > 0, activeLeft: left[0]?.n ?? 0 });
  }

  async createSigningSecret(partnerId: string): Promise<Result<IssuedSigningSecret, "partner_not_found">> {
    const { secret } = issueSigningSecret(this.#random);
    const c = secretColumns(this.#secretKeys, partnerId, secret);
    const rows = await this.#query<SecretRow>(
      "creating a signing secret",
      `insert into signing_secrets (partner_id, secret, key_id, sealed, secret_sha256, last_four)
       select id, $2, $3, $4, $5, $6 from partners where id = $1
       returning ${SECRET_COLUMNS}`,
      [partnerId, c.secret, c.keyId, c.sealed, c.sha256, c.lastFour],
    );
    const row = rows[0];
    if (row === undefined) return adminRefusals.partnerNotFound(partnerId);
    return accept({ signingSecret: secret, summary: secretSummary(row) });
  }

  async listSigningSecrets(
    partnerId: string,
  ): Promise<Result<readonly SigningSecretSummary[], "partner_not_found">> {
    if ((await this.#partnerRow(partnerId)) === undefined) return adminRefusals.partnerNotFound(partnerId);
    const rows = await this.#query<SecretRow>(
      "listing signing secrets",
      `select ${SECRET_COLUMNS} from signing_secrets where partner_id = $1 order by id`,
      [partnerId],
    );
    return accept(rows.map(secretSummary));
  }

  async revokeSigningSecret(
    partnerId: string,
    secretId: string,
  ): Promise<Result<Revocation<SigningSecretSummary>, "partner_not_found" | "secret_not_found">> {
    if ((await this.#partnerRow(partnerId)) === undefined) return adminRefusals.partnerNotFound(partnerId);
    if (!isCredentialId(secretId)) return adminRefusals.secretNotFound(partnerId, secretId);
    const revoked = await this.#query<SecretRow>(
      "revoking a signing secret",
      `update signing_secrets set status = 'revoked', revoked_at = now()
       where id = $1 and partner_id = $2 and status = 'active' returning ${SECRET_COLUMNS}`,
      [secretId, partnerId],
    );
    const row =
      revoked[0] ??
      (
        await this.#query<SecretRow>(
          "reading a signing secret",
          `select ${SECRET_COLUMNS} from signing_secrets where id = $1 and partner_id = $2`,
          [secretId, partnerId],
        )
      )[0];
    if (row === undefined) return adminRefusals.secretNotFound(partnerId, secretId);
    const left = await this.#query<{ n: number }>(
      "counting active signing secrets",
      "select count(*)::int as n from signing_secrets where partner_id = $1 and status = 'active'",
      [partnerId],
    );
    return accept({ summary: secretSummary(row), changed: revoked.length > 0, activeLeft: left[0]?.n ?? 0 });
  }

  close(): Promise<void> {
    return this.#release();
  }

  async #partnerRow(partnerId: string): Promise<PartnerRow | undefined> {
    const rows = await this.#query<PartnerRow>(
      "reading a partner",
      `select ${PARTNER_COLUMNS} from partners p where p.id = $1`,
      [partnerId],
    );
    return rows[0];
  }

  async #query<Row extends pg.QueryResultRow>(
    operation: string,
    text: string,
    values: unknown[] = [],
  ): Promise<Row[]> {
    const result = await guarded(operation, () => this.#pool.query<Row>(text, values));
    return result.rows;
  }

  async #transaction<T>(operation: string, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(this.#pool, body);
    } catch (error) {
      throw unavailable(operation, error);
    }
  }
}

function time(value: Date): string {
  return value.toISOString();
}

function partnerSummary(row: PartnerRow): PartnerSummary {
  return {
    id: row.id,
    name: row.name,
    verified: row.verified,
    createdAt: time(row.created_at),
    activeKeys: { sandbox: row.sandbox_keys, production: row.production_keys },
    activeSigningSecrets: row.secrets,
  };
}

function keySummary(row: KeyRow): ApiKeySummary {
  return {
    id: row.id,
    partnerId: row.partner_id,
    environment: row.environment,
    status: row.status,
    prefix: API_KEY_PREFIXES[row.environment],
    lastFour: row.last_four,
    label: row.label,
    createdAt: time(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : time(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : time(row.revoked_at),
  };
}

function secretSummary(row: SecretRow): SigningSecretSummary {
  return {
    id: row.id,
    partnerId: row.partner_id,
    status: row.status,
    lastFour: row.last_four,
    createdAt: time(row.created_at),
    revokedAt: row.revoked_at === null ? null : time(row.revoked_at),
  };
}
