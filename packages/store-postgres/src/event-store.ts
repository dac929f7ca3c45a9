/**
 * Accepted events and their idempotency keys in PostgreSQL (CONTRACT §5). `append` claims the key
 * and stores the event in ONE statement (`INSERT … ON CONFLICT DO NOTHING RETURNING id`); only when
 * the key was taken does a second statement read its holder. The event is committed before
 * `append` resolves, so an acknowledged event survives any crash of the server.
 */
import type { AppendResult, Environment, EventStore, NewEvent, StoredEvent } from "@partner-yield/core";
import type pg from "pg";
import { guarded, unavailable } from "./errors.js";

/**
 * Every insert holds this advisory lock in shared mode until it commits; `list` takes it exclusively
 * for the moment of its read. Writers never wait for each other, and a reader never sees an event
 * while one with a smaller id is still uncommitted, so paging by id misses nothing.
 */
const EVENT_LOG_LOCK = 7_263_002;

const COLUMNS = `id::text as id, partner_id, environment, idempotency_key, fingerprint, event_type,
  occurred_at, data, raw_body, received_at`;

const INSERT = `with gate as (select pg_advisory_xact_lock_shared(${EVENT_LOG_LOCK}))
insert into events (partner_id, environment, idempotency_key, fingerprint, event_type, occurred_at,
  data, raw_body, received_at)
select $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::jsonb, $8::text, $9::timestamptz
from gate
on conflict (partner_id, environment, idempotency_key) do nothing
returning id::text as id`;

const FIND = `select ${COLUMNS} from events where partner_id = $1 and environment = $2 and idempotency_key = $3`;

interface EventRow {
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

export class PostgresEventStore implements EventStore {
  readonly #pool: pg.Pool;
  readonly #release: () => Promise<void>;

  /** `release` is called by `close()`; by default the pool stays open (it is the caller's). */
  constructor(pool: pg.Pool, release: () => Promise<void> = () => Promise.resolve()) {
    this.#pool = pool;
    this.#release = release;
  }

  async append(event: NewEvent): Promise<AppendResult> {
    const inserted = await guarded("storing an event", () =>
      this.#pool.query<{ id: string }>(INSERT, [
        event.partnerId,
        event.environment,
        event.idempotencyKey,
        event.fingerprint,
        event.eventType,
        event.occurredAt,
        jsonbOrNull(event.data),
        event.rawBody,
        new Date(event.receivedAt).toISOString(),
      ]),
    );
    const row = inserted.rows[0];
    if (row !== undefined) return { status: "created", event: { ...event, id: toEventId(row.id) } };
    // The key is taken, by a committed event: ON CONFLICT waited for its transaction.
    const holder = await this.find(event.partnerId, event.environment, event.idempotencyKey);
    if (holder === undefined) {
      // Unreachable unless the row was deleted in between; the client retries.
      return { status: "in_progress" };
    }
    return { status: holder.fingerprint === event.fingerprint ? "duplicate" : "conflict", event: holder };
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

  close(): Promise<void> {
    return this.#release();
  }
}

function toEventId(text: string): number {
  const id = Number(text);
  // bigint identity: 2^53 events is ~285 years at a million events a second.
  if (!Number.isSafeInteger(id)) throw new RangeError(`event id ${text} exceeds Number.MAX_SAFE_INTEGER`);
  return id;
}

function toStoredEvent(row: EventRow): StoredEvent {
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
