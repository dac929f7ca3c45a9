/**
 * Accepted events and their idempotency keys in PostgreSQL (CONTRACT §5). `append` claims the key
 * and stores the event in ONE statement (`INSERT … ON CONFLICT DO NOTHING RETURNING`); only when
 * the key was taken does a second statement read its holder. The event is committed before
 * `append` resolves, so an acknowledged event survives any crash of the server.
 *
 * Concurrent appends share that statement, and so its commit (group commit): the appends made in
 * the same turn of the event loop, or while earlier batches hold every slot (`maxInFlight`), go
 * out as one multi-row insert of at most `maxBatch` events. A lone append goes out at once (after
 * the current microtasks), as it did before batching. Each append's answer is the one it would get
 * alone, in the order the appends were made: two appends of one key in a batch send the first and
 * judge the second against it (duplicate or conflict), never both to the database.
 */
import { createHash } from "node:crypto";
import type { AppendResult, Environment, EventStore, NewEvent, StoredEvent } from "@partner-yield/core";
import type pg from "pg";
import { boolArray, textArray, timestamptzArray } from "./binary-array.js";
import { guarded, unavailable } from "./errors.js";

/**
 * Every insert holds this advisory lock in shared mode until it commits (the number is written in
 * migration 0008's function too); `list` takes it exclusively for the moment of its read. Writers
 * never wait for each other, and a reader never sees an event while one with a smaller id is still
 * uncommitted, so paging by id misses nothing.
 */
const EVENT_LOG_LOCK = 7_263_002;

const COLUMNS = `id::text as id, partner_id, environment, idempotency_key, fingerprint, event_type,
  occurred_at, data, raw_body, received_at`;

/**
 * The batch's events as parallel arrays, inserted in the order given, under the event log's lock
 * (`EVENT_LOG_LOCK`, taken before the first row), by `partner_yield_append_events` (migrations
 * 0008 and 0010), whose statement each connection plans once (a generic plan) instead of at every
 * execution. Where `$8` is true, `data` is taken from the raw body (`$9`) in PostgreSQL and `$7` is
 * null (`dataInBody`). An event whose `authorizedBy` key or secret (`$11`, and `$12` the secret's
 * SHA-256 in hex: the row may hold the secret sealed, migration 0006, and the secret itself never
 * travels; null: not checked) is no longer active is not inserted and comes back as `revoked` with
 * the credential that failed, checked in the statement that claims the key (CONTRACT §4, §5).
 * Within the statement a key already taken, by a committed event or one in flight (ON CONFLICT
 * waits for its transaction), is skipped; the rows with an `id` name the events inserted.
 */
const INSERT = `select event_id as id, event_partner_id as partner_id, event_environment as environment,
  event_idempotency_key as idempotency_key, refused_credential as revoked
from partner_yield_append_events($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
  $6::text[], $7::text[], $8::boolean[], $9::text[], $10::timestamptz[], $11::text[], $12::text[])`;

/** The insert's prepared-statement name (per connection; the text's hash keeps versions apart). */
const INSERT_NAME = `partner-yield-append-${createHash("sha256").update(INSERT).digest("hex").slice(0, 16)}`;

const FIND = `select ${COLUMNS} from events where partner_id = $1 and environment = $2 and idempotency_key = $3`;

/** The holders of several keys at once. */
const FIND_MANY = `select ${COLUMNS} from events
join unnest($1::text[], $2::text[], $3::text[]) as wanted(partner_id, environment, idempotency_key)
  using (partner_id, environment, idempotency_key)`;

/** Defaults of `PostgresEventStoreOptions`. */
export const DEFAULT_MAX_BATCH = 64;
export const DEFAULT_MAX_IN_FLIGHT = 1;

/** How `PostgresEventStore` groups concurrent appends. */
export interface PostgresEventStoreOptions {
  /** Most events in one insert statement. Default 64; 1 turns batching off. */
  readonly maxBatch?: number | undefined;
  /**
   * Most insert statements in flight at once; appends made while all are in flight wait and go
   * out together in the next one. Default 1: PostgreSQL spends much of a statement's CPU on the
   * statement itself whatever it carries, so fewer, fuller statements cost it less per event
   * (docs/performance.md, "The POST's statement").
   */
  readonly maxInFlight?: number | undefined;
}

/** An append waiting for its batch. */
interface Pending {
  readonly event: NewEvent;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
}

/** An `events` row as the driver reads it (shared with event-consumer.ts). */
export interface EventRow {
  id: string;
  partner_id: string;
  environment: Environment;
  idempotency_key: string;
  fingerprint: string;
  event_type: string;
  occurred_at: string;
  data: Record<string, unknown> | null;
  raw_body: string;
  received_at: Date;
}

/**
 * @example
 * const events = new PostgresEventStore(pool); // the pool stays the caller's
 * const result = await events.append(event); // created, duplicate or conflict; committed when created
 */
export class PostgresEventStore implements EventStore {
  readonly #pool: pg.Pool;
  readonly #release: () => Promise<void>;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  /** Appends not yet sent, in the order they were made. */
  #queue: Pending[] = [];
  #inFlight = 0;
  #scheduled = false;
  /** For `close`: settles when the last batch in flight settles with nothing queued. */
  #idle: { promise: Promise<void>; resolve: () => void } | undefined;

  /**
   * `release` is called by `close()`; by default the pool stays open (it is the caller's).
   * @throws RangeError when a bound of `options` is not a positive safe integer.
   */
  constructor(
    pool: pg.Pool,
    release: () => Promise<void> = () => Promise.resolve(),
    options: PostgresEventStoreOptions = {},
  ) {
    this.#pool = pool;
    this.#release = release;
    this.#maxBatch = positive("maxBatch", options.maxBatch ?? DEFAULT_MAX_BATCH);
    this.#maxInFlight = positive("maxInFlight", options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
  }

  append(event: NewEvent): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ event, resolve, reject });
      if (!this.#scheduled && this.#inFlight < this.#maxInFlight) {
        // The appends made in this turn join the first batch.
        this.#scheduled = true;
        queueMicrotask(() => {
          this.#scheduled = false;
          this.#drain();
        });
      }
    });
  }

  /** Sends queued appends, a batch per free slot. */
  #drain(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) {
      const batch = this.#queue.length <= this.#maxBatch ? this.#queue : this.#queue.slice(0, this.#maxBatch);
      this.#queue = batch === this.#queue ? [] : this.#queue.slice(this.#maxBatch);
      this.#inFlight++;
      void this.#store(batch)
        .catch((error: unknown) => {
          // Not a failure of the database (that is settled in #store) but of this code: no append
          // hangs. Rejecting one already settled does nothing.
          const failure = unavailable("storing an event", error);
          for (const pending of batch) pending.reject(failure);
        })
        .finally(() => {
          this.#inFlight--;
          this.#drain();
          if (this.#inFlight === 0 && this.#queue.length === 0) {
            this.#idle?.resolve();
            this.#idle = undefined;
          }
        });
    }
  }

  /**
   * Stores a batch and settles every append in it (a failure of the database is each append's
   * `StoreUnavailableError`). The first append of each key goes to the database; the later ones of
   * that key are judged against its outcome, as they would be one after the other.
   */
  async #store(batch: readonly Pending[]): Promise<void> {
    const byScope = new Map<string, Pending[]>();
    for (const pending of batch) {
      const scope = scopeOf(pending.event);
      const group = byScope.get(scope);
      if (group === undefined) byScope.set(scope, [pending]);
      else group.push(pending);
    }
    // One order of keys for every batch, so two batches never wait for each other's keys in a cycle.
    const scopes = [...byScope.keys()].sort();
    const firsts = scopes.map((scope) => byScope.get(scope)![0]!.event);
    let inserted: pg.QueryResult<{
      id: string | null;
      partner_id: string;
      environment: string;
      idempotency_key: string;
      revoked: "api_key" | "signing_secret" | null;
    }>;
    try {
      // A named statement: each connection parses and plans it once, then gets only the values.
      inserted = await this.#pool.query({ name: INSERT_NAME, text: INSERT, values: columnsOf(firsts) });
    } catch (error) {
      if (firsts.length > 1 && isDataError(error)) {
        // One event the database refuses must not fail the others: each key on its own, as alone.
        await Promise.all(scopes.map((scope) => this.#store(byScope.get(scope)!)));
        return;
      }
      const failure = unavailable("storing an event", error);
      for (const pending of batch) pending.reject(failure);
      return;
    }
    const holders = new Map<string, StoredEvent>();
    /** Keys whose first append was refused for a revoked credential: the rest go out on their own. */
    const refused: string[] = [];
    for (const row of inserted.rows) {
      const scope = JSON.stringify([row.partner_id, row.environment, row.idempotency_key]);
      const first = byScope.get(scope)?.[0];
      if (first === undefined) throw new Error(`the insert returned a key it was not given: ${scope}`);
      if (row.revoked !== null) {
        refused.push(scope);
        first.resolve({ status: "revoked", credential: row.revoked });
        continue;
      }
      const event = { ...first.event, id: toEventId(row.id!) };
      holders.set(scope, event);
      first.resolve({ status: "created", event });
    }
    if (refused.length > 0) {
      const wasRefused = new Set(refused);
      const rest = refused.flatMap((scope) => byScope.get(scope)!.slice(1));
      for (const scope of refused) byScope.delete(scope);
      scopes.splice(0, scopes.length, ...scopes.filter((scope) => !wasRefused.has(scope)));
      // Judged as if they came after the refused one: alone, with their own credentials.
      if (rest.length > 0) await this.#store(rest);
    }
    // The keys that were taken, by committed events: ON CONFLICT waited for their transactions.
    const taken = scopes.filter((scope) => !holders.has(scope));
    const wasTaken = new Set(taken);
    if (taken.length > 0) {
      try {
        const found = await this.#pool.query<EventRow>(FIND_MANY, [
          taken.map((scope) => byScope.get(scope)![0]!.event.partnerId),
          taken.map((scope) => byScope.get(scope)![0]!.event.environment),
          taken.map((scope) => byScope.get(scope)![0]!.event.idempotencyKey),
        ]);
        for (const row of found.rows) {
          holders.set(
            JSON.stringify([row.partner_id, row.environment, row.idempotency_key]),
            toStoredEvent(row),
          );
        }
      } catch (error) {
        const failure = unavailable("reading an event", error);
        for (const scope of taken) for (const pending of byScope.get(scope)!) pending.reject(failure);
        return;
      }
    }
    for (const scope of scopes) {
      const group = byScope.get(scope)!;
      const holder = holders.get(scope);
      for (const [i, pending] of group.entries()) {
        if (i === 0 && !wasTaken.has(scope)) continue; // created, settled above
        // Unreachable unless the row was deleted in between; the client retries.
        if (holder === undefined) pending.resolve({ status: "in_progress" });
        else
          pending.resolve({
            status: holder.fingerprint === pending.event.fingerprint ? "duplicate" : "conflict",
            event: holder,
          });
      }
    }
  }

  async find(
    partnerId: string,
    environment: Environment,
    idempotencyKey: string,
  ): Promise<StoredEvent | undefined> {
    const result = await guarded("reading an event", () =>
      this.#pool.query<EventRow>(FIND, [partnerId, environment, idempotencyKey]),
    );
    const row = result.rows[0];
    return row === undefined ? undefined : toStoredEvent(row);
  }

  /**
   * Events with an id greater than `afterId`, in id order, at most `limit` (default 1000): the
   * reader for an embedding team (forwarding, reconciliation). Page with the last id seen.
   */
  async list(afterId = 0, limit = 1000): Promise<StoredEvent[]> {
    const client = await guarded("connecting", () => this.#pool.connect());
    let failure: Error | undefined;
    try {
      await client.query("begin");
      // Waits for inserts in flight to commit, and holds new ones back for the read.
      await client.query(`select pg_advisory_xact_lock(${EVENT_LOG_LOCK})`);
      const result = await client.query<EventRow>(
        `select ${COLUMNS} from events where events.id > $1 order by events.id limit $2`,
        [String(Math.max(0, Math.trunc(afterId))), Math.max(0, Math.trunc(limit))],
      );
      await client.query("commit");
      return result.rows.map(toStoredEvent);
    } catch (error) {
      failure = error as Error;
      throw unavailable("listing events", error);
    } finally {
      client.release(failure);
    }
  }

  /** Waits for the appends in flight, then calls `release`. */
  async close(): Promise<void> {
    if (this.#inFlight > 0 || this.#queue.length > 0) {
      if (this.#idle === undefined) {
        let resolve = () => {};
        const promise = new Promise<void>((r) => {
          resolve = r;
        });
        this.#idle = { promise, resolve };
      }
      await this.#idle.promise;
    }
    return this.#release();
  }
}

/**
 * The scope (partner, environment, key) as PostgreSQL holds it: the driver sends a lone surrogate
 * as U+FFFD, so two keys that differ only there are one key to the unique index.
 */
function scopeOf(event: NewEvent): string {
  return JSON.stringify([wellFormed(event.partnerId), event.environment, wellFormed(event.idempotencyKey)]);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}

/**
 * The insert's twelve parameters: one array per column, an element per event, in PostgreSQL's
 * binary array format (binary-array.ts).
 */
function columnsOf(events: readonly NewEvent[]): Buffer[] {
  const inBody = events.map(dataInBody);
  return [
    textArray(events.map((e) => e.partnerId)),
    textArray(events.map((e) => e.environment)),
    textArray(events.map((e) => e.idempotencyKey)),
    textArray(events.map((e) => e.fingerprint)),
    textArray(events.map((e) => e.eventType)),
    textArray(events.map((e) => e.occurredAt)),
    textArray(events.map((e, i) => (inBody[i] ? null : jsonbOrNull(e.data)))),
    boolArray(inBody),
    textArray(events.map((e) => e.rawBody)),
    timestamptzArray(events.map((e) => e.receivedAt)),
    textArray(events.map((e) => e.authorizedBy?.keyHash)),
    textArray(
      events.map((e) => (e.authorizedBy === undefined ? null : secretSha256(e.authorizedBy.signingSecret))),
    ),
  ];
}

/** Secret → its SHA-256 in hex, for the secrets in use (a partner's few): cleared when it fills. */
const secretHashes = new Map<string, string>();

/** The lowercase hex SHA-256 of a signing secret's UTF-8 bytes, as `signing_secrets.secret_sha256` holds it. */
function secretSha256(secret: string): string {
  let hash = secretHashes.get(secret);
  if (hash === undefined) {
    if (secretHashes.size >= 1024) secretHashes.clear();
    hash = createHash("sha256").update(secret, "utf8").digest("hex");
    secretHashes.set(secret, hash);
  }
  return hash;
}

/**
 * A refusal of the data (SQLSTATE class 22, data exception, or 23, integrity constraint
 * violation): it depends on one event of the batch, not on the database being there.
 */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, not ${value}`);
  }
  return value;
}

function toEventId(text: string): number {
  const id = Number(text);
  // bigint identity: 2^53 events is ~285 years at a million events a second.
  if (!Number.isSafeInteger(id)) throw new RangeError(`event id ${text} exceeds Number.MAX_SAFE_INTEGER`);
  return id;
}

export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: toEventId(row.id),
    partnerId: row.partner_id,
    environment: row.environment,
    idempotencyKey: row.idempotency_key,
    fingerprint: row.fingerprint,
    eventType: row.event_type,
    occurredAt: row.occurred_at,
    data: dataOf(row),
    rawBody: row.raw_body,
    receivedAt: row.received_at.getTime(),
  };
}

/**
 * The event's `data` exactly as the core parsed it: from the signed body (the source of truth, and
 * exact where jsonb is not: -0, key order), else from the column.
 */
function dataOf(row: EventRow): Record<string, unknown> {
  try {
    const body = JSON.parse(row.raw_body) as { data?: unknown };
    if (typeof body === "object" && body !== null && Object.hasOwn(body, "data")) {
      const data = body.data;
      if (typeof data === "object" && data !== null && !Array.isArray(data))
        return data as Record<string, unknown>;
    }
  } catch {
    // Not the core's JSON body (a row written by other means): the column holds the data.
  }
  return row.data ?? {};
}

/**
 * In a raw body, what jsonb may refuse where `JSON.parse` accepts: a `\u` escape of NUL or of a
 * character beyond ASCII (a lone surrogate is refused, and a database whose encoding is not UTF-8
 * may have no such character), a number with an exponent of four digits or more, or a run of a
 * thousand digits (`numeric` holds neither). Conservative: text inside strings that looks like
 * these counts too. Each scan is linear in the body (a digit run is tried once, from its first
 * digit); the escape scan runs only when the body has a `\u` at all.
 */
const ESCAPE_MAY_REFUSE = /\\u(?:0000|(?!00[0-7]))/;
const EXPONENT_MAY_REFUSE = /[eE][+-]?\d{4}/;
const DIGITS_MAY_REFUSE = /(?<!\d)\d{1000}/;

function jsonbMayRefuse(body: string): boolean {
  return (
    (body.includes("\\u") && ESCAPE_MAY_REFUSE.test(body)) ||
    EXPONENT_MAY_REFUSE.test(body) ||
    (body.length >= 1000 && DIGITS_MAY_REFUSE.test(body))
  );
}

/**
 * Whether PostgreSQL can take the event's `data` from its raw body (`(raw_body::jsonb) -> 'data'`)
 * instead of the JSON text of it: the core says `data` is `JSON.parse(rawBody).data`
 * (`dataFromRawBody`) and the body holds nothing jsonb may refuse. Then the numbers are stored as
 * written, and the server neither serializes nor sends `data` a second time.
 */
function dataInBody(event: NewEvent): boolean {
  return event.dataFromRawBody === true && !jsonbMayRefuse(event.rawBody);
}

/** JSON text for the jsonb column, or null when jsonb cannot hold it (\u0000, a lone surrogate). */
function jsonbOrNull(data: Readonly<Record<string, unknown>>): string | null {
  return holdsUnstorable(data, 0) ? null : JSON.stringify(data);
}

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function holdsUnstorable(value: unknown, depth: number): boolean {
  if (typeof value === "string") return UNSTORABLE.test(value);
  if (typeof value !== "object" || value === null || depth > 200) return false;
  if (Array.isArray(value)) return value.some((v) => holdsUnstorable(v, depth + 1));
  for (const [key, v] of Object.entries(value)) {
    if (UNSTORABLE.test(key) || holdsUnstorable(v, depth + 1)) return true;
  }
  return false;
}
