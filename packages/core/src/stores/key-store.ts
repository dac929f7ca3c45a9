/**
 * API keys at rest (CONTRACT §4): only SHA-256 hashes are stored; the plaintext is shown once.
 * A backend implements `KeyStore`; the core looks keys up by hash only.
 */
import type { Environment } from "../auth/environment.js";
import type { MaybePromise } from "./maybe-promise.js";

export type ApiKeyStatus = "active" | "revoked";

export interface ApiKeyRecord {
  /** Lowercase hex SHA-256 of the key's UTF-8 bytes. */
  readonly keyHash: string;
  /**
   * The key's id as `keys list` shows it (`ApiKeySummary.id`), when the store keeps one (a
   * database, the admin's memory store; not fixtures): what logs name a key by, never the key.
   */
  readonly id?: string | undefined;
  readonly partnerId: string;
  readonly environment: Environment;
  readonly status: ApiKeyStatus;
  /** Free text for operators, e.g. "demo sandbox key". */
  readonly label?: string | undefined;
}

export interface KeyStore {
  /**
   * The record for this hash, whatever its status, or undefined: the record itself when the store
   * has it at hand, else a promise of it (`MaybePromise`). Every partner request asks it.
   */
  findByHash(keyHash: string): MaybePromise<ApiKeyRecord | undefined>;
  close(): Promise<void>;
}

/** The embedded default, filled from fixtures or by `put`. */
export class MemoryKeyStore implements KeyStore {
  readonly #byHash = new Map<string, ApiKeyRecord>();

  constructor(records: Iterable<ApiKeyRecord> = []) {
    for (const record of records) this.put(record);
  }

  /** Adds or replaces a record (rotation, revocation). */
  put(record: ApiKeyRecord): void {
    this.#byHash.set(record.keyHash, record);
  }

  /** Answered at once: the API does not wait for it (`MaybePromise`). */
  findByHash(keyHash: string): ApiKeyRecord | undefined {
    return this.#byHash.get(keyHash);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
