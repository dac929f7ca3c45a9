/**
 * The event store: where accepted partner events live, and the idempotency record with them
 * (CONTRACT §5). A backend (memory, PostgreSQL, …) implements `EventStore`; the core needs only
 * `append`, which must claim the key and store the event as ONE atomic step.
 */
import type { Environment } from "../auth/environment.js";

/** What the core hands to the store for a new event. */
export interface NewEvent {
  readonly partnerId: string;
  readonly environment: Environment;
  readonly idempotencyKey: string;
  /** Lowercase hex SHA-256 of the canonical JSON of the parsed body (CONTRACT §5). */
  readonly fingerprint: string;
  readonly eventType: string;
  readonly occurredAt: string;
  /** The event's `data` object, opaque to us. */
  readonly data: Readonly<Record<string, unknown>>;
  /** The exact bytes that were signed, as UTF-8 text. */
  readonly rawBody: string;
  /** Milliseconds since the epoch when the request was accepted. */
  readonly receivedAt: number;
}

export interface StoredEvent extends NewEvent {
  /** Positive, unique within the store, increasing in acceptance order. */
  readonly id: number;
}

/**
 * - `created`: the key was new; the event is stored durably before this resolves.
 * - `duplicate`: same scope, key and fingerprint; `event` is the original.
 * - `conflict`: same scope and key, another fingerprint (→ 422 idempotency_key_reused).
 * - `in_progress`: a store that cannot claim and store atomically saw the key mid-flight
 *   (→ 409 idempotency_in_progress with Retry-After: 1). Atomic stores never return it.
 */
export type AppendResult =
  | { readonly status: "created"; readonly event: StoredEvent }
  | { readonly status: "duplicate"; readonly event: StoredEvent }
  | { readonly status: "conflict"; readonly event: StoredEvent }
  | { readonly status: "in_progress" };

export interface EventStore {
  /**
   * Atomically claim (partnerId, environment, idempotencyKey): store the event and return
   * `created`, or return what the key already holds. Under any concurrency one key yields one event.
   * Throw `StoreUnavailableError` when the backend is down (→ 503).
   */
  append(event: NewEvent): Promise<AppendResult>;
  /** Looks up an event by scope and key (for operators and tests). */
  find(partnerId: string, environment: Environment, idempotencyKey: string): Promise<StoredEvent | undefined>;
  /** Events with id greater than `afterId`, in id order, at most `limit`. */
  list(afterId?: number, limit?: number): Promise<StoredEvent[]>;
  /** Flushes and releases resources; called on shutdown after requests in flight finished. */
  close(): Promise<void>;
}

/** The embedded default: a Map per scope key. Atomic because JS runs one callback at a time. */
export class MemoryEventStore implements EventStore {
  readonly #byKey = new Map<string, StoredEvent>();
  readonly #events: StoredEvent[] = [];
  #nextId = 1;

  append(event: NewEvent): Promise<AppendResult> {
    const key = scopeKey(event.partnerId, event.environment, event.idempotencyKey);
    const existing = this.#byKey.get(key);
    if (existing !== undefined) {
      const status = existing.fingerprint === event.fingerprint ? "duplicate" : "conflict";
      return Promise.resolve({ status, event: existing });
    }
    const stored: StoredEvent = { ...event, id: this.#nextId++ };
    this.#byKey.set(key, stored);
    this.#events.push(stored);
    return Promise.resolve({ status: "created", event: stored });
  }

  find(
    partnerId: string,
    environment: Environment,
    idempotencyKey: string,
  ): Promise<StoredEvent | undefined> {
    return Promise.resolve(this.#byKey.get(scopeKey(partnerId, environment, idempotencyKey)));
  }

  list(afterId = 0, limit = 1000): Promise<StoredEvent[]> {
    // ids are 1-based positions in #events
    return Promise.resolve(this.#events.slice(Math.max(0, afterId), Math.max(0, afterId) + limit));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function scopeKey(partnerId: string, environment: Environment, idempotencyKey: string): string {
  // NUL cannot occur in any of the three (keys are visible ASCII), so the join is unambiguous.
  return `${partnerId}\u0000${environment}\u0000${idempotencyKey}`;
}
