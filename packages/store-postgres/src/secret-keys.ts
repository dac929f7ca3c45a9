/**
 * Signing secrets encrypted at rest (migration 0006): AES-256-GCM under keys from the environment.
 *
 * `PARTNER_YIELD_SECRET_KEYS` lists keys, comma-separated, each `ID:BASE64` (32 bytes in base64)
 * or a bare `BASE64` (its id is then `k` and the first 8 hex digits of its SHA-256); the first
 * encrypts, every one decrypts, so a key is rotated by putting the new one first, running
 * `partner-yield db rekey-secrets`, then removing the old one. `PARTNER_YIELD_SECRET_KEY` is the
 * one-key form. The partner id is the associated data: a sealed secret copied to another partner's
 * row does not open. The HMAC gets the plain secret, in memory only.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type pg from "pg";
import { guarded } from "./errors.js";
import { inTransaction } from "./transaction.js";

/** A bad key variable, or a sealed secret no key opens; the message names the variable. */
export class SecretKeyError extends Error {
  override readonly name = "SecretKeyError";
}

export const SECRET_KEYS_VARIABLE = "PARTNER_YIELD_SECRET_KEYS";
export const SECRET_KEY_VARIABLE = "PARTNER_YIELD_SECRET_KEY";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const ID = /^[A-Za-z0-9_-]{1,32}$/;

/** A secret as a row holds it: plain (`secret`), or sealed under `keyId`. */
export interface StoredSecret {
  readonly secret: string | null;
  readonly keyId: string | null;
  readonly sealed: Uint8Array | null;
}

/** The columns a write of `secret` sets (migration 0006). */
export interface SecretColumns {
  readonly secret: string | null;
  readonly keyId: string | null;
  readonly sealed: Buffer | null;
  readonly sha256: string;
  readonly lastFour: string;
}

/**
 * The keys of one process: the first encrypts, all decrypt.
 * @example
 * const keys = SecretKeyring.fromEnv(process.env); // undefined when neither variable is set
 * const columns = keys?.seal("acme", "whsec_…");
 */
export class SecretKeyring {
  readonly #keys: ReadonlyMap<string, Buffer>;
  /** The id of the key that encrypts. */
  readonly currentId: string;

  constructor(keys: readonly { readonly id: string; readonly key: Uint8Array }[]) {
    if (keys.length === 0) throw new SecretKeyError(`${SECRET_KEYS_VARIABLE}: no key given`);
    const map = new Map<string, Buffer>();
    for (const { id, key } of keys) {
      if (!ID.test(id))
        throw new SecretKeyError(`${SECRET_KEYS_VARIABLE}: a key id is 1 to 32 of A-Z a-z 0-9 _ -`);
      if (key.length !== 32)
        throw new SecretKeyError(
          `${SECRET_KEYS_VARIABLE}: key ${id} is ${key.length} bytes; AES-256 needs 32`,
        );
      if (map.has(id)) throw new SecretKeyError(`${SECRET_KEYS_VARIABLE}: key id ${id} is given twice`);
      map.set(id, Buffer.from(key));
    }
    this.#keys = map;
    this.currentId = keys[0]!.id;
  }

  /**
   * The keyring of `PARTNER_YIELD_SECRET_KEYS` or `PARTNER_YIELD_SECRET_KEY`; undefined when
   * neither is set (secrets are then written in plain text).
   * @throws SecretKeyError for a malformed value (never quoting it: it is a key), or both set.
   */
  static fromEnv(env: Readonly<Record<string, string | undefined>>): SecretKeyring | undefined {
    const many = env[SECRET_KEYS_VARIABLE] || undefined;
    const one = env[SECRET_KEY_VARIABLE] || undefined;
    if (many !== undefined && one !== undefined)
      throw new SecretKeyError(
        `set ${SECRET_KEYS_VARIABLE} or ${SECRET_KEY_VARIABLE}, not both (${SECRET_KEYS_VARIABLE} lists every key)`,
      );
    const value = many ?? one;
    if (value === undefined) return undefined;
    const variable = many === undefined ? SECRET_KEY_VARIABLE : SECRET_KEYS_VARIABLE;
    const entries = value.split(",").map((e) => e.trim());
    if (one !== undefined && entries.length > 1)
      throw new SecretKeyError(
        `${SECRET_KEY_VARIABLE} holds one key; list several in ${SECRET_KEYS_VARIABLE}`,
      );
    return new SecretKeyring(
      entries.map((entry, i) => {
        const colon = entry.indexOf(":");
        const encoded = colon < 0 ? entry : entry.slice(colon + 1);
        if (!/^[A-Za-z0-9+/]{43}=$/.test(encoded))
          throw new SecretKeyError(
            `${variable}: key ${i + 1} is not 32 bytes in base64 (make one with \`openssl rand -base64 32\`)`,
          );
        const key = Buffer.from(encoded, "base64");
        const id =
          colon < 0
            ? `k${createHash("sha256").update(key).digest("hex").slice(0, 8)}`
            : entry.slice(0, colon);
        if (!ID.test(id))
          throw new SecretKeyError(`${variable}: key ${i + 1}'s id is not 1 to 32 of A-Z a-z 0-9 _ -`);
        return { id, key };
      }),
    );
  }

  /** Whether a key of this id is held. */
  has(id: string): boolean {
    return this.#keys.has(id);
  }

  /** The ids held, the current one first. */
  get ids(): readonly string[] {
    return [...this.#keys.keys()];
  }

  /** `secret` sealed under the current key for `partnerId`'s row. */
  seal(partnerId: string, secret: string): SecretColumns {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#keys.get(this.currentId)!, nonce);
    cipher.setAAD(Buffer.from(partnerId, "utf8"));
    const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return {
      secret: null,
      keyId: this.currentId,
      sealed: Buffer.concat([nonce, body, cipher.getAuthTag()]),
      sha256: secretSha256(secret),
      lastFour: secret.slice(-4),
    };
  }

  /**
   * The plain secret of a sealed one.
   * @throws SecretKeyError when the key is not held or the value does not open (altered, or
   *   another partner's).
   */
  open(partnerId: string, keyId: string, sealed: Uint8Array): string {
    const key = this.#keys.get(keyId);
    if (key === undefined)
      throw new SecretKeyError(
        `a signing secret of partner ${partnerId} is sealed under key ${keyId}, which ${SECRET_KEYS_VARIABLE} does not hold`,
      );
    const bytes = Buffer.from(sealed);
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(partnerId, "utf8"));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new SecretKeyError(
        `a signing secret of partner ${partnerId} does not open with key ${keyId}: altered, or not this partner's`,
      );
    }
  }
}

/** Hex SHA-256 of a secret: how a row is found without the secret (the import, the event log). */
export function secretSha256(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** The columns to write `secret` with: sealed with `keys`, plain without. */
export function secretColumns(
  keys: SecretKeyring | undefined,
  partnerId: string,
  secret: string,
): SecretColumns {
  if (keys !== undefined) return keys.seal(partnerId, secret);
  return { secret, keyId: null, sealed: null, sha256: secretSha256(secret), lastFour: secret.slice(-4) };
}

/** A stored secret in plain text: as stored, or opened with `keys`. */
export function openSecret(keys: SecretKeyring | undefined, partnerId: string, stored: StoredSecret): string {
  if (stored.secret !== null) return stored.secret;
  if (keys === undefined)
    throw new SecretKeyError(
      `the signing secrets are encrypted in the database and no key is set: set ${SECRET_KEYS_VARIABLE} (or ${SECRET_KEY_VARIABLE})`,
    );
  return keys.open(partnerId, stored.keyId!, stored.sealed!);
}

/** What the database holds, by form: plain rows, and sealed rows per key id. */
export interface SecretForms {
  readonly plain: number;
  readonly sealedBy: Readonly<Record<string, number>>;
}

export async function secretForms(pool: pg.Pool): Promise<SecretForms> {
  const result = await guarded("reading the signing secrets' keys", () =>
    pool.query<{ key_id: string | null; n: number }>(
      "select key_id, count(*)::int as n from signing_secrets group by key_id",
    ),
  );
  let plain = 0;
  const sealedBy: Record<string, number> = {};
  for (const row of result.rows) {
    if (row.key_id === null) plain = row.n;
    else sealedBy[row.key_id] = row.n;
  }
  return { plain, sealedBy };
}

/**
 * Refuses (SecretKeyError) a database holding sealed secrets whose key `keys` lacks; returns a
 * warning when secrets are stored in plain text while a key is set (`db rekey-secrets` seals them).
 */
export async function checkSecretKeys(
  pool: pg.Pool,
  keys: SecretKeyring | undefined,
): Promise<string | undefined> {
  const forms = await secretForms(pool);
  const missing = Object.keys(forms.sealedBy).filter((id) => keys === undefined || !keys.has(id));
  if (missing.length > 0)
    throw new SecretKeyError(
      `the database holds signing secrets encrypted under key${missing.length === 1 ? "" : "s"} ${missing.join(", ")}, ` +
        `which ${keys === undefined ? `no key is set: set ${SECRET_KEYS_VARIABLE}` : `${SECRET_KEYS_VARIABLE} does not hold: add ${missing.length === 1 ? "it" : "them"}`} ` +
        "(the key ids only are stored, never a key)",
    );
  if (keys !== undefined && forms.plain > 0)
    return `${forms.plain} signing secret(s) are stored in plain text: run \`partner-yield db rekey-secrets\` to encrypt them under key ${keys.currentId}`;
  return undefined;
}

/** What `rekeySecrets` did. */
export interface RekeyReport {
  /** Plain rows now sealed. */
  readonly sealed: number;
  /** Rows sealed under another key, now under the current one. */
  readonly rekeyed: number;
  /** Rows already under the current key. */
  readonly unchanged: number;
  readonly keyId: string;
}

/**
 * Seals every signing secret (active and revoked) under the current key, in one transaction: plain
 * rows and rows of older keys. Nothing is written when a row does not open (a key missing).
 * @example const report = await rekeySecrets(pool, SecretKeyring.fromEnv(process.env)!);
 */
export async function rekeySecrets(pool: pg.Pool, keys: SecretKeyring): Promise<RekeyReport> {
  return inTransaction(pool, async (client) => {
    const rows = await client.query<{
      id: string;
      partner_id: string;
      secret: string | null;
      key_id: string | null;
      sealed: Buffer | null;
    }>(
      "select id::text as id, partner_id, secret, key_id, sealed from signing_secrets order by id for update",
    );
    let sealed = 0;
    let rekeyed = 0;
    let unchanged = 0;
    for (const row of rows.rows) {
      if (row.key_id === keys.currentId) {
        unchanged++;
        continue;
      }
      const plain = openSecret(keys, row.partner_id, {
        secret: row.secret,
        keyId: row.key_id,
        sealed: row.sealed,
      });
      const columns = keys.seal(row.partner_id, plain);
      await client.query("update signing_secrets set secret = null, key_id = $2, sealed = $3 where id = $1", [
        row.id,
        columns.keyId,
        columns.sealed,
      ]);
      if (row.secret === null) rekeyed++;
      else sealed++;
    }
    return { sealed, rekeyed, unchanged, keyId: keys.currentId };
  });
}
