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
  /**
   * True when `data` is `JSON.parse(rawBody).data` (the core sets it: that is how it parsed the
   * event). A store may then keep the raw body only and parse `data` from it when the event is read,
   * instead of holding the same content twice; `MemoryEventStore` does. Leave it out otherwise.
   */
  readonly dataFromRawBody?: boolean | undefined;
}

export interface StoredEvent extends NewEvent {
  /** Positive, unique within the store, increasing in acceptance order. */
  readonly id: number;
}

/**
 * - `created`: the key was new; the event is stored durably before this resolves.
 * - `full`: the key was new but a bounded store has no room for the event (→ 503
 *   event_store_full with `Retry-After`); nothing was stored. A store that is full still answers
 *   `duplicate` and `conflict` for keys it holds: idempotency comes before the bound.
 * - `duplicate`: same scope, key and fingerprint; `event` is the original.
 * - `conflict`: same scope and key, another fingerprint (→ 422 idempotency_key_reused).
 * - `in_progress`: a store that cannot claim and store atomically saw the key mid-flight
 *   (→ 409 idempotency_in_progress with Retry-After: 1). Atomic stores never return it.
 */
export type AppendResult =
  | { readonly status: "created"; readonly event: StoredEvent }
  | { readonly status: "duplicate"; readonly event: StoredEvent }
  | { readonly status: "conflict"; readonly event: StoredEvent }
  | { readonly status: "in_progress" }
  | { readonly status: "full"; readonly reason: string };

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

/** Bounds of the in-memory store; see `MemoryEventStore`. */
export interface MemoryEventStoreOptions {
  /** Most events held; default 100,000. */
  readonly maxEvents?: number | undefined;
  /** Most bytes held, as `MemoryEventStore.bytes` counts them; default 256 MiB. */
  readonly maxEventBytes?: number | undefined;
}

export const DEFAULT_MAX_EVENTS = 100_000;
export const DEFAULT_MAX_EVENT_BYTES = 256 * 1024 * 1024;

/**
 * What one event costs the heap, as the bound counts it: a fixed 512 bytes (the stored record and
 * its entries in the two indexes), every string at two bytes a UTF-16 unit plus a 24-byte header
 * (the raw body, the scope key of the index, the partner, key, fingerprint, type and time), and,
 * unless the store parses it from the raw body when read (`dataFromRawBody`), the parsed `data`
 * tree node by node (`valueMemoryBytes`). Each charge is at or above what V8 (64-bit, Node 20)
 * takes for it, so the figure is never below the heap it counts: `bench/event-memory.ts` compares
 * the two (docs/performance.md).
 */
export function eventMemoryBytes(event: NewEvent): number {
  const keyUnits = event.partnerId.length + event.environment.length + event.idempotencyKey.length;
  return (
    512 +
    stringBytes(event.rawBody.length) +
    stringBytes(keyUnits + 2) + // the scope key of the index
    stringBytes(event.partnerId.length) +
    stringBytes(event.idempotencyKey.length) +
    stringBytes(event.fingerprint.length) +
    stringBytes(event.eventType.length) +
    stringBytes(event.occurredAt.length) +
    (event.dataFromRawBody === true ? 0 : valueMemoryBytes(event.data))
  );
}

function isSmallInteger(n: number): boolean {
  return Number.isInteger(n) && n < 2 ** 30 && n > -(2 ** 30);
}

function stringBytes(units: number): number {
  return 24 + 2 * units;
}

/**
 * A parsed JSON value's heap, over-estimated per node: an object 64 bytes and 48 a member (its slot
 * in a dictionary-mode object) plus the member name's string; an array 48 bytes and 8 an element;
 * a string as above; a number 16 (a heap number) unless it is an integer V8 keeps in its slot
 * (|n| < 2^30); `true`, `false` and `null` nothing beyond their
 * slot. Iterative: no depth exhausts the stack.
 */
export function valueMemoryBytes(value: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === "string") bytes += stringBytes(next.length);
    else if (typeof next === "number") bytes += isSmallInteger(next) ? 0 : 16;
    else if (Array.isArray(next)) {
      bytes += 48 + 8 * next.length;
      for (const item of next) stack.push(item);
    } else if (typeof next === "object" && next !== null) {
      bytes += 64;
      for (const key of Object.keys(next)) {
        bytes += 48 + stringBytes(key.length);
        stack.push((next as Record<string, unknown>)[key]);
      }
    }
  }
  return bytes;
}

/** An event as the memory store holds it: without `data` when `data` comes from the raw body. */
type HeldEvent = Omit<StoredEvent, "data"> & { readonly data: StoredEvent["data"] | undefined };

/**
 * The embedded default: a Map per scope key. Atomic because JS runs one callback at a time.
 * Bounded (a process that keeps every event would run out of memory and lose them all): past
 * `maxEvents` events or `maxEventBytes` bytes (`eventMemoryBytes`), a NEW event is refused with
 * `full`; a duplicate or a conflicting reuse of a key already held is answered as always. It keeps
 * events for the life of the process only: PostgreSQL is the store for real use. An event appended
 * with `dataFromRawBody` is held as its raw body only (`data` is parsed from it when read): the
 * heap holds its content once, and the collector has half as much to trace.
 */
export class MemoryEventStore implements EventStore {
  readonly #byKey = new Map<string, HeldEvent>();
  readonly #events: HeldEvent[] = [];
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #nextId = 1;

  /** @throws RangeError when a bound is not a positive safe integer. */
  constructor(options: MemoryEventStoreOptions = {}) {
    this.#maxEvents = positive("maxEvents", options.maxEvents ?? DEFAULT_MAX_EVENTS);
    this.#maxBytes = positive("maxEventBytes", options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
  }

  /** Events held. */
  get size(): number {
    return this.#events.length;
  }

  /** Bytes held, as `eventMemoryBytes` counts them. */
  get bytes(): number {
    return this.#bytes;
  }

  append(event: NewEvent): Promise<AppendResult> {
    const key = scopeKey(event.partnerId, event.environment, event.idempotencyKey);
    const existing = this.#byKey.get(key);
    if (existing !== undefined) {
      const status = existing.fingerprint === event.fingerprint ? "duplicate" : "conflict";
      return Promise.resolve({ status, event: withData(existing) });
    }
    if (this.#events.length >= this.#maxEvents) {
      return Promise.resolve({ status: "full", reason: `it holds its maximum of ${this.#maxEvents} events` });
    }
    const cost = eventMemoryBytes(event);
    if (this.#bytes + cost > this.#maxBytes) {
      return Promise.resolve({
        status: "full",
        reason: `this event would take it past its maximum of ${this.#maxBytes} bytes`,
      });
    }
    const id = this.#nextId++;
    const held: HeldEvent =
      event.dataFromRawBody === true
        ? {
            partnerId: event.partnerId,
            environment: event.environment,
            idempotencyKey: event.idempotencyKey,
            fingerprint: event.fingerprint,
            eventType: event.eventType,
            occurredAt: event.occurredAt,
            data: undefined,
            rawBody: event.rawBody,
            receivedAt: event.receivedAt,
            id,
          }
        : { ...event, id };
    this.#byKey.set(key, held);
    this.#events.push(held);
    this.#bytes += cost;
    return Promise.resolve({ status: "created", event: { ...event, id } });
  }

  find(
    partnerId: string,
    environment: Environment,
    idempotencyKey: string,
  ): Promise<StoredEvent | undefined> {
    const held = this.#byKey.get(scopeKey(partnerId, environment, idempotencyKey));
    return Promise.resolve(held === undefined ? undefined : withData(held));
  }

  list(afterId = 0, limit = 1000): Promise<StoredEvent[]> {
    // ids are 1-based positions in #events
    return Promise.resolve(
      this.#events.slice(Math.max(0, afterId), Math.max(0, afterId) + limit).map(withData),
    );
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The event as appended. When `data` was not held it is parsed again from the raw body the first
 * time it is read (an enumerable getter): a duplicate's answer, which the core reads only the id
 * of, parses nothing.
 */
function withData(held: HeldEvent): StoredEvent {
  if (held.data !== undefined) return held as StoredEvent;
  let data: StoredEvent["data"] | undefined;
  return Object.defineProperty({ ...held, dataFromRawBody: true }, "data", {
    enumerable: true,
    get: () => {
      data ??= (JSON.parse(held.rawBody) as { data: StoredEvent["data"] }).data;
      return data;
    },
  }) as StoredEvent;
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, not ${value}`);
  }
  return value;
}

function scopeKey(partnerId: string, environment: Environment, idempotencyKey: string): string {
  // NUL cannot occur in any of the three (keys are visible ASCII), so the join is unambiguous.
  return `${partnerId}\u0000${environment}\u0000${idempotencyKey}`;
}
