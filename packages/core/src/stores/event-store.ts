/**
 * The event store: where accepted partner events live, and the idempotency record with them
 * (CONTRACT §5). A backend (memory, PostgreSQL, …) implements `EventStore`; the core needs only
 * `append`, which must claim the key and store the event as ONE atomic step.
 */
import type { Environment } from "../auth/environment.js";
import { systemRandom } from "../auth/random.js";
import { halfSipHash24 } from "../encoding/half-siphash.js";
import { grownColumn, StringRecords } from "./string-records.js";

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
  /**
   * The credentials that authenticated and signed the event, read again after its body arrived.
   * A store that can check them in the claim's own statement or transaction does (the PostgreSQL
   * one): when the key or the secret is no longer active there, it stores nothing and answers
   * `revoked`, so no body completed after a revocation is accepted (CONTRACT §4, §5).
   */
  readonly authorizedBy?: EventCredentials | undefined;
}

/** The key (by its stored hash) and the signing secret an event was accepted with. */
export interface EventCredentials {
  readonly keyHash: string;
  readonly signingSecret: string;
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
 * - `revoked`: the event's `authorizedBy` key (→ 401 invalid_api_key) or secret (→ 401
 *   invalid_signature) was no longer active when the store checked it with the claim; nothing
 *   was stored. Checked before the key's earlier event: a revoked credential gets no answer.
 */
export type AppendResult =
  | { readonly status: "created"; readonly event: StoredEvent }
  | { readonly status: "duplicate"; readonly event: StoredEvent }
  | { readonly status: "conflict"; readonly event: StoredEvent }
  | { readonly status: "in_progress" }
  | { readonly status: "full"; readonly reason: string }
  | { readonly status: "revoked"; readonly credential: "api_key" | "signing_secret" };

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
  /**
   * Where the store takes the 8 random bytes of its index's hash key; default the platform's
   * cryptographic source. Tests fix it to make keys that collide.
   */
  readonly random?: ((n: number) => Uint8Array) | undefined;
}

export const DEFAULT_MAX_EVENTS = 100_000;
export const DEFAULT_MAX_EVENT_BYTES = 256 * 1024 * 1024;

/**
 * What one event costs, as the bound counts it: a fixed 512 bytes (the event's index entry, its
 * record offsets and `receivedAt`), every string at two bytes a UTF-16 unit plus a 24-byte header
 * (the raw body, the partner, key, fingerprint, type and time, and the scope key once more: an
 * earlier layout held it as the index's string, and the charge is kept so the bound admits the
 * same events), and, unless the store parses it from the raw body when read (`dataFromRawBody`),
 * the parsed `data` tree node by node (`valueMemoryBytes`). Each charge is at or above what
 * `MemoryEventStore` takes for it on 64-bit V8 (Node 20): it holds a string in byte chunks at one
 * byte a unit when ASCII and two otherwise, and an event's index entry in typed arrays. So the
 * figure is never below the memory it counts, apart from the byte chunk the store has reserved
 * ahead (at most 8 MiB): `bench/event-memory.ts` compares the two (docs/performance.md).
 */
export function eventMemoryBytes(event: NewEvent): number {
  const keyUnits = event.partnerId.length + event.environment.length + event.idempotencyKey.length;
  return (
    512 +
    stringBytes(event.rawBody.length) +
    stringBytes(keyUnits + 2) + // the scope key, as the index held it before
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

/** The fields of an event the memory store keeps as strings, in record order. */
const PARTNER = 0;
const ENVIRONMENT = 1;
const KEY = 2;
const FINGERPRINT = 3;
const EVENT_TYPE = 4;
const OCCURRED_AT = 5;
const RAW_BODY = 6;
const FIELDS = 7;

/**
 * The embedded default. Atomic because JS runs one callback at a time. Bounded (a process that
 * keeps every event would run out of memory and lose them all): past `maxEvents` events or
 * `maxEventBytes` bytes (`eventMemoryBytes`), a NEW event is refused with `full`; a duplicate or a
 * conflicting reuse of a key already held is answered as always. It keeps events for the life of
 * the process only: PostgreSQL is the store for real use.
 *
 * An event's strings are held in byte chunks (`StringRecords`), its `receivedAt` in a number
 * column, and its place in a hash table of event numbers keyed by HalfSipHash of its scope (partner,
 * environment, idempotency key) under a random key of this store's, so no client can choose keys
 * that collide. The collector thus traces no object per event, and a store of a million events
 * does not slow collections down (docs/performance.md). An event appended with `dataFromRawBody`
 * is held as its raw body only (`data` is parsed from it when read); any other event's `data` is
 * held as given.
 */
export class MemoryEventStore implements EventStore {
  readonly #strings = new StringRecords(FIELDS);
  #receivedAt = new Float64Array(256);
  /** The scope hash of each event, by event number (its id less one). */
  #hashOf = new Uint32Array(256);
  /** Open addressing, linear probing: event number + 1, or 0 for none; never more than half full. */
  #slots: Int32Array = new Int32Array(512);
  readonly #hashKey: readonly [number, number];
  /** The scope's UTF-16 code units, two bytes each, as hashed. */
  #scratch = new Uint8Array(256);
  /** `data` of the events appended without `dataFromRawBody`, by event number. */
  readonly #data = new Map<number, StoredEvent["data"]>();
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  #bytes = 0;

  /** @throws RangeError when a bound is not a positive safe integer. */
  constructor(options: MemoryEventStoreOptions = {}) {
    this.#maxEvents = positive("maxEvents", options.maxEvents ?? DEFAULT_MAX_EVENTS);
    this.#maxBytes = positive("maxEventBytes", options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
    const key = (options.random ?? systemRandom)(8);
    this.#hashKey = [littleEndian32(key, 0), littleEndian32(key, 4)];
  }

  /** Events held. */
  get size(): number {
    return this.#strings.count;
  }

  /** Bytes held, as `eventMemoryBytes` counts them. */
  get bytes(): number {
    return this.#bytes;
  }

  append(event: NewEvent): Promise<AppendResult> {
    const hash = this.#hash(event.partnerId, event.environment, event.idempotencyKey);
    const existing = this.#find(hash, event.partnerId, event.environment, event.idempotencyKey);
    if (existing >= 0) {
      const status = this.#strings.equals(existing, FINGERPRINT, event.fingerprint)
        ? "duplicate"
        : "conflict";
      return Promise.resolve({ status, event: this.#event(existing) });
    }
    if (this.#strings.count >= this.#maxEvents) {
      return Promise.resolve({ status: "full", reason: `it holds its maximum of ${this.#maxEvents} events` });
    }
    const cost = eventMemoryBytes(event);
    if (this.#bytes + cost > this.#maxBytes) {
      return Promise.resolve({
        status: "full",
        reason: `this event would take it past its maximum of ${this.#maxBytes} bytes`,
      });
    }
    const n = this.#strings.append([
      event.partnerId,
      event.environment,
      event.idempotencyKey,
      event.fingerprint,
      event.eventType,
      event.occurredAt,
      event.rawBody,
    ]);
    if (n === this.#receivedAt.length) {
      this.#receivedAt = grownColumn(this.#receivedAt);
      this.#hashOf = grownColumn(this.#hashOf);
    }
    this.#receivedAt[n] = event.receivedAt;
    this.#hashOf[n] = hash;
    if (event.dataFromRawBody !== true) this.#data.set(n, event.data);
    if (2 * (n + 1) > this.#slots.length) this.#slots = this.#rehashed(2 * this.#slots.length);
    this.#place(this.#slots, hash, n);
    this.#bytes += cost;
    return Promise.resolve({ status: "created", event: { ...event, id: n + 1 } });
  }

  find(
    partnerId: string,
    environment: Environment,
    idempotencyKey: string,
  ): Promise<StoredEvent | undefined> {
    const n = this.#find(
      this.#hash(partnerId, environment, idempotencyKey),
      partnerId,
      environment,
      idempotencyKey,
    );
    return Promise.resolve(n < 0 ? undefined : this.#event(n));
  }

  list(afterId = 0, limit = 1000): Promise<StoredEvent[]> {
    // ids are event numbers plus one
    const from = Math.max(0, afterId);
    const to = Math.min(this.#strings.count, from + Math.max(0, limit));
    const events: StoredEvent[] = [];
    for (let n = from; n < to; n++) events.push(this.#event(n));
    return Promise.resolve(events);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** HalfSipHash of the scope's code units, partner, environment and key, each ended by a 0. */
  #hash(partnerId: string, environment: string, idempotencyKey: string): number {
    const bytes = 2 * (partnerId.length + environment.length + idempotencyKey.length + 3);
    if (bytes > this.#scratch.length) this.#scratch = new Uint8Array(2 * bytes);
    const scratch = this.#scratch;
    let at = putUnits(scratch, 0, partnerId);
    at = putUnits(scratch, at, environment);
    putUnits(scratch, at, idempotencyKey);
    return halfSipHash24(this.#hashKey[0], this.#hashKey[1], scratch, bytes);
  }

  /** The event number holding this scope, or -1. */
  #find(hash: number, partnerId: string, environment: string, idempotencyKey: string): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    const strings = this.#strings;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const slot = slots[i]!;
      if (slot === 0) return -1;
      const n = slot - 1;
      if (
        this.#hashOf[n] === hash &&
        strings.equals(n, KEY, idempotencyKey) &&
        strings.equals(n, PARTNER, partnerId) &&
        strings.equals(n, ENVIRONMENT, environment)
      ) {
        return n;
      }
    }
  }

  #place(slots: Int32Array, hash: number, n: number): void {
    const mask = slots.length - 1;
    let i = hash & mask;
    while (slots[i] !== 0) i = (i + 1) & mask;
    slots[i] = n + 1;
  }

  #rehashed(capacity: number): Int32Array {
    const slots = new Int32Array(capacity);
    const count = this.#strings.count;
    for (let n = 0; n < count; n++) this.#place(slots, this.#hashOf[n]!, n);
    return slots;
  }

  /**
   * Event number `n` as appended. When its `data` was not held, it is parsed from the raw body the
   * first time it is read (an enumerable getter): a duplicate's answer, which the core reads only
   * the id of, parses nothing.
   */
  #event(n: number): StoredEvent {
    const strings = this.#strings;
    const fields = {
      partnerId: strings.field(n, PARTNER),
      environment: strings.field(n, ENVIRONMENT) as Environment,
      idempotencyKey: strings.field(n, KEY),
      fingerprint: strings.field(n, FINGERPRINT),
      eventType: strings.field(n, EVENT_TYPE),
      occurredAt: strings.field(n, OCCURRED_AT),
    };
    const rawBody = strings.field(n, RAW_BODY);
    const receivedAt = this.#receivedAt[n]!;
    const held = this.#data.get(n);
    if (held !== undefined || this.#data.has(n)) {
      return { ...fields, data: held as StoredEvent["data"], rawBody, receivedAt, id: n + 1 };
    }
    let data: StoredEvent["data"] | undefined;
    return Object.defineProperty(
      { ...fields, data: undefined, rawBody, receivedAt, dataFromRawBody: true, id: n + 1 },
      "data",
      {
        enumerable: true,
        get: () => {
          data ??= (JSON.parse(rawBody) as { data: StoredEvent["data"] }).data;
          return data;
        },
      },
    ) as unknown as StoredEvent;
  }
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, not ${value}`);
  }
  return value;
}

/** Writes `text`'s code units at `at`, two bytes each, then a 0 unit; returns where it ended. */
function putUnits(scratch: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    scratch[at++] = unit & 0xff;
    scratch[at++] = unit >>> 8;
  }
  scratch[at++] = 0;
  scratch[at++] = 0;
  return at;
}

function littleEndian32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}
