/**
 * Processing accepted events downstream: named consumers with a durable checkpoint (CONTRACT
 * "Processing events"). A backend implements `EventConsumerPort`; `MemoryEventConsumers` does it
 * over a `MemoryEventStore` (tests, the sandbox), `PostgresEventConsumers` in store-postgres.
 *
 * - The log is read in a commit-safe order: a consumer is never handed an event after one that
 *   follows it, so a checkpoint never passes an event still being stored.
 * - `poll` + `ack`, and `iterate`, are at-least-once: an event handed out and not acknowledged
 *   comes again. Anything the consumer does outside the store must dedupe on the event id.
 * - `processBatch` runs the handler in the transaction that moves the checkpoint (PostgreSQL: the
 *   handler gets the transaction's client and writes its own rows there), so its writes and the
 *   acknowledgement commit together or not at all: exactly once inside the store. Consumers of one
 *   name take turns: while one holds a batch, the others get nothing and try again.
 * @module
 */
import type { Environment } from "../auth/environment.js";
import type { EventStore, StoredEvent } from "./event-store.js";

/** A consumer's name: what its checkpoint is filed under. */
export const CONSUMER_NAME = /^[a-z0-9][a-z0-9_.:-]{0,127}$/;

/** Which events a consumer is handed; the checkpoint moves over the others too. */
export interface EventFilter {
  readonly partner?: string | undefined;
  readonly environment?: Environment | undefined;
  /** The event type (`event_type`), exactly. */
  readonly type?: string | undefined;
}

export interface PollOptions extends EventFilter {
  readonly consumer: string;
  /** Most events handed out; default 100, at most 10,000. */
  readonly limit?: number | undefined;
}

/** A batch read from a consumer's checkpoint. */
export interface ConsumerBatch {
  /** The events the filter passed, in log order. */
  readonly events: readonly StoredEvent[];
  /**
   * The id of the last event read, the filtered-out included: `ack(consumer, upTo)` acknowledges the
   * whole batch. Undefined when nothing was read.
   */
  readonly upTo: number | undefined;
  /** Events read, the filtered-out included. */
  readonly read: number;
}

/** A consumer as the operator sees it. */
export interface ConsumerState {
  readonly name: string;
  /** The id of the last acknowledged event; 0 before the first. */
  readonly position: number;
  /** Events after the checkpoint. */
  readonly lagEvents: number;
  /** Seconds since the oldest event after the checkpoint was received; 0 when none. */
  readonly lagSeconds: number;
  /** When the checkpoint last moved (ms since the epoch), or undefined. */
  readonly acknowledgedAt: number | undefined;
}

/** `handler(events, tx)`: `tx` is the backend's transaction (PostgreSQL: a `pg.PoolClient`). */
export type BatchHandler<Tx> = (events: readonly StoredEvent[], tx: Tx) => Promise<void>;

export interface ProcessOptions extends EventFilter {
  /** Most events per batch; default 100. */
  readonly limit?: number | undefined;
}

export interface EventConsumerPort<Tx = unknown> {
  /** Events after the consumer's checkpoint (registering it at the log's start on first use). */
  poll(options: PollOptions): Promise<ConsumerBatch>;
  /**
   * Moves the checkpoint to event `upToId` (compare-and-set: only forward). Resolves true when it
   * moved, false when the checkpoint was already there or past it.
   * @throws RangeError when no event `upToId` is held (and it is not 0).
   */
  ack(consumer: string, upToId: number): Promise<boolean>;
  /**
   * One batch after the checkpoint handed to `handler` in the transaction that moves the checkpoint
   * past it. Resolves the number of events read (0: nothing new, or another consumer of this name
   * holds its turn). A handler that throws rolls everything back; the error is rethrown.
   */
  processBatch(consumer: string, handler: BatchHandler<Tx>, options?: ProcessOptions): Promise<number>;
  /**
   * Resolves when events may have been committed since the call (a wake-up), or after `timeoutMs`,
   * or when `signal` aborts; never rejects.
   */
  waitForEvents(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /** Every registered consumer. */
  consumers(): Promise<ConsumerState[]>;
  /** Puts the checkpoint just after event `toId` (0: the start), backwards or forwards. */
  reset(consumer: string, toId: number): Promise<void>;
  close(): Promise<void>;
}

/** @throws RangeError naming the rule when `name` is not a consumer name. */
export function checkConsumerName(name: string): string {
  if (!CONSUMER_NAME.test(name))
    throw new RangeError(
      `consumer name ${JSON.stringify(name).slice(0, 140)} must match ${CONSUMER_NAME.source} (lowercase letters, digits, _ . : -)`,
    );
  return name;
}

/** @throws RangeError when `limit` is not 1 to 10,000. */
export function checkLimit(limit: number | undefined, fallback = 100): number {
  const value = limit ?? fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > 10_000)
    throw new RangeError(`limit must be an integer from 1 to 10000, not ${value}`);
  return value;
}

/** @throws RangeError when `id` is not a non-negative safe integer. */
export function checkEventId(id: number): number {
  if (!Number.isSafeInteger(id) || id < 0)
    throw new RangeError(`an event id is a non-negative integer, not ${id}`);
  return id;
}

/** Whether `event` passes `filter`. */
export function matchesFilter(event: StoredEvent, filter: EventFilter): boolean {
  return (
    (filter.partner === undefined || event.partnerId === filter.partner) &&
    (filter.environment === undefined || event.environment === filter.environment) &&
    (filter.type === undefined || event.eventType === filter.type)
  );
}

export interface IterateOptions extends PollOptions {
  /** Ends the iteration (after acknowledging what was handled). */
  readonly signal?: AbortSignal | undefined;
  /** Longest wait for a wake-up before polling anyway; default 1000 ms. */
  readonly pollIntervalMs?: number | undefined;
}

/**
 * The consumer's events, one at a time, waiting for new ones (until `signal` aborts). An event is
 * acknowledged once the loop asks for the one after it; one the loop left by `break` or a throw
 * is not, and comes again: at-least-once.
 * @example
 * for await (const event of iterateEvents(consumers, { consumer: "ledger" })) await forward(event);
 */
export async function* iterateEvents(
  port: EventConsumerPort<unknown>,
  options: IterateOptions,
): AsyncGenerator<StoredEvent, void, undefined> {
  const interval = options.pollIntervalMs ?? 1000;
  let done: number | undefined;
  try {
    while (options.signal?.aborted !== true) {
      const batch = await port.poll(options);
      if (batch.upTo === undefined) {
        await port.waitForEvents(interval, options.signal);
        continue;
      }
      for (const event of batch.events) {
        yield event;
        done = event.id;
      }
      // The whole batch was handled: the filtered-out events after the last one are passed too.
      done = batch.upTo;
      await port.ack(options.consumer, done);
      done = undefined;
    }
  } finally {
    if (done !== undefined) await port.ack(options.consumer, done);
  }
}

export interface RunOptions extends ProcessOptions {
  readonly signal?: AbortSignal | undefined;
  /** Longest wait for a wake-up before trying again; default 1000 ms. */
  readonly pollIntervalMs?: number | undefined;
}

/**
 * `processBatch` in a loop until `signal` aborts: a batch after each wake-up, and at least once every
 * `pollIntervalMs`. Resolves the number of events handled; rejects with the handler's error.
 * @example await runConsumer(consumers, "ledger", async (events, tx) => { … }, { signal });
 */
export async function runConsumer<Tx>(
  port: EventConsumerPort<Tx>,
  consumer: string,
  handler: BatchHandler<Tx>,
  options: RunOptions = {},
): Promise<number> {
  const interval = options.pollIntervalMs ?? 1000;
  let handled = 0;
  while (options.signal?.aborted !== true) {
    const read = await port.processBatch(consumer, handler, options);
    handled += read;
    if (read === 0) await port.waitForEvents(interval, options.signal);
  }
  return handled;
}

/**
 * The port over a `MemoryEventStore` (or any `EventStore` whose `list` is in commit order, as an
 * in-process store's is): checkpoints live in this object, as long as it does. Consumers
 * of one name take turns in `processBatch`. `waitForEvents` polls every 20 ms.
 */
export class MemoryEventConsumers implements EventConsumerPort<undefined> {
  readonly #store: EventStore;
  readonly #positions = new Map<string, { position: number; acknowledgedAt: number | undefined }>();
  readonly #busy = new Set<string>();
  readonly #now: () => number;

  constructor(store: EventStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  #entry(consumer: string) {
    checkConsumerName(consumer);
    let entry = this.#positions.get(consumer);
    if (entry === undefined) {
      entry = { position: 0, acknowledgedAt: undefined };
      this.#positions.set(consumer, entry);
    }
    return entry;
  }

  async poll(options: PollOptions): Promise<ConsumerBatch> {
    const limit = checkLimit(options.limit);
    const entry = this.#entry(options.consumer);
    const events: StoredEvent[] = [];
    let upTo: number | undefined;
    let read = 0;
    let after = entry.position;
    // Filtered reads scan on until the batch is full or the log ends.
    for (;;) {
      const page = await this.#store.list(after, 1000);
      for (const event of page) {
        upTo = event.id;
        read++;
        if (matchesFilter(event, options)) {
          events.push(event);
          if (events.length === limit) return { events, upTo, read };
        }
      }
      if (page.length < 1000) return { events, upTo, read };
      after = page[page.length - 1]!.id;
    }
  }

  async ack(consumer: string, upToId: number): Promise<boolean> {
    const entry = this.#entry(consumer);
    checkEventId(upToId);
    if (upToId !== 0 && (await this.#store.list(upToId - 1, 1))[0]?.id !== upToId)
      throw new RangeError(`no event ${upToId}`);
    if (upToId <= entry.position) return false;
    entry.position = upToId;
    entry.acknowledgedAt = this.#now();
    return true;
  }

  async processBatch(
    consumer: string,
    handler: BatchHandler<undefined>,
    options: ProcessOptions = {},
  ): Promise<number> {
    this.#entry(consumer);
    if (this.#busy.has(consumer)) return 0;
    this.#busy.add(consumer);
    try {
      const batch = await this.poll({ ...options, consumer });
      if (batch.upTo === undefined) return 0;
      if (batch.events.length > 0) await handler(batch.events, undefined);
      await this.ack(consumer, batch.upTo);
      return batch.read;
    } finally {
      this.#busy.delete(consumer);
    }
  }

  waitForEvents(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return sleep(Math.min(timeoutMs, 20), signal);
  }

  async consumers(): Promise<ConsumerState[]> {
    const now = this.#now();
    const states: ConsumerState[] = [];
    for (const [name, entry] of [...this.#positions].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const behind = await this.#store.list(entry.position, 1_000_000);
      states.push({
        name,
        position: entry.position,
        lagEvents: behind.length,
        lagSeconds: behind.length === 0 ? 0 : Math.max(0, (now - behind[0]!.receivedAt) / 1000),
        acknowledgedAt: entry.acknowledgedAt,
      });
    }
    return states;
  }

  async reset(consumer: string, toId: number): Promise<void> {
    const entry = this.#entry(consumer);
    checkEventId(toId);
    if (toId !== 0 && (await this.#store.list(toId - 1, 1))[0]?.id !== toId)
      throw new RangeError(`no event ${toId}`);
    entry.position = toId;
    entry.acknowledgedAt = this.#now();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Resolves after `ms` or when `signal` aborts, whichever comes first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
