/**
 * Named event consumers on PostgreSQL (the core's `EventConsumerPort`; README "Processing events").
 *
 * Commit-safe order (migration 0007): each event row records the id of the transaction that
 * inserted it (`xid`, an xid8). The log is read in (xid, id) order, and only rows whose xid is below
 * the reading snapshot's xmin (`pg_snapshot_xmin(pg_current_snapshot())`), the oldest transaction
 * still running when the statement began. Every transaction below it has ended, so the rows below
 * it are final: none can appear later between two rows a consumer was handed. And any transaction
 * that may still insert has an xid at or above it, so it sorts after every row handed out. A
 * checkpoint is a position (xid, id) in that order; it is named by the event id it ends at.
 *
 * An event's transaction commits before its 200, so an event accepted after another one's 200
 * sorts after it: per partner (and overall), events are handed out in the order they were
 * acknowledged to their senders; events of one insert batch in id order. What the fence costs: a
 * transaction left open anywhere on the server (a psql session inside BEGIN that wrote something)
 * holds every consumer back until it ends, never makes one skip.
 *
 * The wake-up: migration 0007's trigger sends NOTIFY partner_yield_events with each inserting
 * statement, at commit; `waitForEvents` listens on a connection of its own and falls back to its
 * timeout (the poll interval) while that connection is down.
 */
import type {
  BatchHandler,
  ConsumerBatch,
  ConsumerState,
  EventConsumerPort,
  EventFilter,
  PollOptions,
  ProcessOptions,
  StoredEvent,
} from "@partner-yield/core";
import { checkConsumerName, checkEventId, checkLimit, sleep } from "@partner-yield/core/backends";
import pg from "pg";
import { guarded } from "./errors.js";
import { type EventRow, toStoredEvent } from "./event-store.js";

/** The channel migration 0007's trigger notifies on every commit that inserted events. */
export const EVENTS_CHANNEL = "partner_yield_events";

/** The fewest days `pruneEvents` keeps an event: the idempotency window of CONTRACT §5. */
export const IDEMPOTENCY_WINDOW_DAYS = 30;

const COLUMNS = `e.id::text as id, e.partner_id, e.environment, e.idempotency_key, e.fingerprint,
  e.event_type, e.occurred_at, e.data, e.raw_body, e.received_at, e.xid::text as xid`;

/**
 * The rows after a consumer's position and below the fence ($1 name, $2 fence). The position comes
 * in as two scalar subqueries (init plans), so the (xid, id) index scan starts at it.
 */
const AFTER = `from events e
  where (e.xid, e.id) > ((select position_xid from event_consumers where name = $1),
      (select position_id from event_consumers where name = $1))
    and e.xid < $2::xid8`;

/** The filter's three conditions, on parameters $n (partner), $n+1 (environment), $n+2 (type). */
function filterSql(n: number): string {
  return `($${n}::text is null or e.partner_id = $${n}) and ($${n + 1}::text is null or e.environment = $${n + 1})
  and ($${n + 2}::text is null or e.event_type = $${n + 2})`;
}
export interface PostgresEventConsumersOptions {
  /**
   * How the wake-up listener connects (a connection of its own, never the pool's). Default: the
   * pool's options. `false`: no listener, `waitForEvents` waits its whole timeout (polling).
   */
  readonly connection?: pg.ClientConfig | false | undefined;
  /** Longest wait before the listener reconnects after a failure; default 5000 ms. */
  readonly reconnectMaxMs?: number | undefined;
}

type Row = EventRow & { xid: string };

/**
 * @example
 * const consumers = new PostgresEventConsumers(pool);
 * await runConsumer(consumers, "ledger", async (events, client) => {
 *   for (const e of events) await client.query("insert into ledger … ", [e.id, …]);
 * }, { signal });
 */
export class PostgresEventConsumers implements EventConsumerPort<pg.PoolClient> {
  readonly #pool: pg.Pool;
  readonly #connection: pg.ClientConfig | false;
  readonly #reconnectMaxMs: number;
  readonly #registered = new Set<string>();
  #listener: pg.Client | undefined;
  #listening = false;
  #closed = false;
  #failures = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #waiters = new Set<() => void>();
  #subscribed = false;
  /** Wake-ups so far, and as many as the last `waitForEvents` saw. */
  #generation = 0;
  #seen = 0;

  constructor(pool: pg.Pool, options: PostgresEventConsumersOptions = {}) {
    this.#pool = pool;
    this.#connection = options.connection ?? (pool as unknown as { options: pg.ClientConfig }).options;
    this.#reconnectMaxMs = options.reconnectMaxMs ?? 5000;
  }

  /** Files the consumer at the log's start unless it is already registered. */
  async #register(consumer: string, client: pg.Pool | pg.PoolClient = this.#pool): Promise<void> {
    checkConsumerName(consumer);
    if (this.#registered.has(consumer)) return;
    await guarded("registering a consumer", () =>
      client.query("insert into event_consumers (name) values ($1) on conflict (name) do nothing", [
        consumer,
      ]),
    );
    this.#registered.add(consumer);
  }

  async poll(options: PollOptions): Promise<ConsumerBatch> {
    const limit = checkLimit(options.limit);
    await this.#register(options.consumer);
    return guarded("reading events", async () => {
      const fence = await this.#pool.query<{ xmin: string }>(FENCE);
      return this.#read(this.#pool, options.consumer, fence.rows[0]!.xmin, limit, options);
    });
  }

  /** A batch after the consumer's position, below `fence`, through `client`. */
  async #read(
    client: pg.Pool | pg.PoolClient,
    consumer: string,
    fence: string,
    limit: number,
    filter: EventFilter,
  ): Promise<ConsumerBatch> {
    if (filter.partner === undefined && filter.environment === undefined && filter.type === undefined) {
      const rows = await client.query<Row>(`select ${COLUMNS} ${AFTER} order by e.xid, e.id limit $3`, [
        consumer,
        fence,
        limit,
      ]);
      const events = rows.rows.map(toStoredEvent);
      return { events, upTo: events.at(-1)?.id, read: events.length };
    }
    // Filtered: scan up to max(limit, 1000) rows of the log, hand out the matching ones (at most
    // `limit`); the batch ends at the last matching one when full, else at the last row scanned.
    const scan = await client.query<{ id: string; matches: boolean }>(
      `select e.id::text as id, ${filterSql(4)} as matches ${AFTER} order by e.xid, e.id limit $3`,
      [
        consumer,
        fence,
        Math.max(limit, 1000),
        filter.partner ?? null,
        filter.environment ?? null,
        filter.type ?? null,
      ],
    );
    const wanted: string[] = [];
    let end = scan.rows.length - 1;
    for (const [i, row] of scan.rows.entries()) {
      if (!row.matches) continue;
      wanted.push(row.id);
      if (wanted.length === limit) {
        end = i;
        break;
      }
    }
    if (end < 0) return { events: [], upTo: undefined, read: 0 };
    const rows =
      wanted.length === 0
        ? { rows: [] as Row[] }
        : await client.query<Row>(
            `select ${COLUMNS} from events e where e.id = any($1::bigint[]) order by e.xid, e.id`,
            [wanted],
          );
    return { events: rows.rows.map(toStoredEvent), upTo: Number(scan.rows[end]!.id), read: end + 1 };
  }

  async ack(consumer: string, upToId: number): Promise<boolean> {
    checkEventId(upToId);
    await this.#register(consumer);
    if (upToId === 0) return false;
    const result = await guarded("acknowledging events", () =>
      this.#pool.query<{ found: boolean; moved: boolean }>(ACK, [consumer, String(upToId)]),
    );
    const row = result.rows[0]!;
    if (!row.found) throw new RangeError(`no event ${upToId} (never stored, or pruned)`);
    return row.moved;
  }

  async processBatch(
    consumer: string,
    handler: BatchHandler<pg.PoolClient>,
    options: ProcessOptions = {},
  ): Promise<number> {
    const limit = checkLimit(options.limit);
    await this.#register(consumer);
    const client = await guarded("connecting", () => this.#pool.connect());
    let broken: Error | undefined;
    // A connection that dies while checked out (killed mid-batch) reports here, not as an uncaught
    // error; the statement in flight fails too, and the client is discarded on release.
    const lost = (error: Error) => {
      broken = error;
    };
    client.on("error", lost);
    try {
      const batch = await guarded("reading events", async () => {
        await client.query("begin");
        // The fence first, before this transaction takes an xid of its own (the lock below does).
        const fence = (await client.query<{ xmin: string }>(FENCE)).rows[0]!.xmin;
        const turn = await client.query(
          "select 1 from event_consumers where name = $1 for update skip locked",
          [consumer],
        );
        // Another consumer of this name holds its turn.
        if (turn.rowCount === 0) return undefined;
        return this.#read(client, consumer, fence, limit, options);
      });
      if (batch?.upTo === undefined) {
        await guarded("reading events", () => client.query("rollback"));
        return 0;
      }
      // The handler's own error passes as it is (after the rollback below).
      if (batch.events.length > 0) await handler(batch.events, client);
      await guarded("acknowledging events", async () => {
        await client.query(ACK, [consumer, String(batch.upTo)]);
        await client.query("commit");
      });
      return batch.read;
    } catch (error) {
      await client.query("rollback").catch((e: Error) => {
        broken = e;
      });
      throw error;
    } finally {
      client.removeListener("error", lost);
      client.release(broken);
    }
  }

  waitForEvents(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#connection !== false && !this.#listening && !this.#closed) {
      this.#listening = true;
      void this.#listen();
    }
    // A wake-up that came while the caller was reading: read again at once.
    if (this.#generation !== this.#seen) {
      this.#seen = this.#generation;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const controller = new AbortController();
      const wake = () => controller.abort();
      this.#waiters.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
      void sleep(timeoutMs, controller.signal).then(() => {
        this.#seen = this.#generation;
        this.#waiters.delete(wake);
        signal?.removeEventListener("abort", wake);
        resolve();
      });
    });
  }

  /** Whether the wake-up listener is subscribed now. */
  get listening(): boolean {
    return this.#subscribed;
  }

  async #listen(): Promise<void> {
    if (this.#closed || this.#connection === false) return;
    const client = new pg.Client({
      ...this.#connection,
      application_name: "partner-yield-events",
      keepAlive: true,
      connectionTimeoutMillis: 5000,
    } as pg.ClientConfig);
    this.#listener = client;
    const lost = () => {
      if (this.#listener !== client) return;
      this.#listener = undefined;
      this.#subscribed = false;
      client.end().catch(() => undefined);
      if (this.#closed) return;
      const wait = Math.min(this.#reconnectMaxMs, 100 * 2 ** this.#failures);
      this.#failures = Math.min(this.#failures + 1, 30);
      this.#retry = setTimeout(() => void this.#listen(), wait);
      this.#retry.unref?.();
      // Whatever was committed while nobody listened: wake everyone to read.
      this.#wakeAll();
    };
    client.on("error", lost);
    client.on("end", lost);
    client.on("notification", (message) => {
      if (message.channel === EVENTS_CHANNEL) this.#wakeAll();
    });
    try {
      await client.connect();
      await client.query(`listen ${EVENTS_CHANNEL}`);
      if (this.#listener !== client) return;
      this.#failures = 0;
      this.#subscribed = true;
      // Anything committed before the LISTEN took effect is read now.
      this.#wakeAll();
    } catch {
      lost();
    }
  }

  #wakeAll(): void {
    this.#generation++;
    const waiters = this.#waiters;
    this.#waiters = new Set();
    for (const wake of waiters) wake();
  }

  async consumers(): Promise<ConsumerState[]> {
    const result = await guarded("listing consumers", () =>
      this.#pool.query<{
        name: string;
        position_id: string;
        lag_events: string;
        lag_seconds: number | null;
        acknowledged_at: Date | null;
      }>(CONSUMERS),
    );
    return result.rows.map((row) => ({
      name: row.name,
      position: Number(row.position_id),
      lagEvents: Number(row.lag_events),
      lagSeconds: Math.max(0, row.lag_seconds ?? 0),
      acknowledgedAt: row.acknowledged_at?.getTime(),
    }));
  }

  async reset(consumer: string, toId: number): Promise<void> {
    checkConsumerName(consumer);
    checkEventId(toId);
    const result = await guarded("resetting a consumer", () =>
      this.#pool.query<{ found: boolean }>(RESET, [consumer, String(toId)]),
    );
    if (result.rows[0]?.found !== true) throw new RangeError(`no event ${toId} (never stored, or pruned)`);
    this.#registered.add(consumer);
  }

  /** Stops the wake-up listener; the pool stays the caller's. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#listener;
    this.#listener = undefined;
    this.#wakeAll();
    if (client !== undefined) {
      client.removeAllListeners("end");
      client.on("error", () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}

/** The oldest transaction still running as the statement began: every row below it is final. */
const FENCE = "select pg_snapshot_xmin(pg_current_snapshot())::text as xmin";

/** Moves the checkpoint to event $2 when it lies after it ($1 the consumer). */
const ACK = `with target as (select xid, id from events where id = $2::bigint),
moved as (
  update event_consumers c set position_xid = t.xid, position_id = t.id, acknowledged_at = now()
  from target t where c.name = $1 and (c.position_xid, c.position_id) < (t.xid, t.id)
  returning 1
)
select exists (select 1 from target) as found, exists (select 1 from moved) as moved`;

/** Puts the checkpoint at event $2 (0: the start), registering the consumer. */
const RESET = `with target as (
  select xid, id from events where id = $2::bigint
  union all select '0'::xid8, 0 where $2::bigint = 0
)
insert into event_consumers as c (name, position_xid, position_id, acknowledged_at)
select $1, t.xid, t.id, now() from target t
on conflict (name) do update set position_xid = excluded.position_xid,
  position_id = excluded.position_id, acknowledged_at = excluded.acknowledged_at
returning true as found`;

const CONSUMERS = `select c.name, c.position_id::text, c.acknowledged_at,
  (select count(*) from events e where (e.xid, e.id) > (c.position_xid, c.position_id)) as lag_events,
  (select extract(epoch from now() - min(e.received_at))::float8 from events e
    where (e.xid, e.id) > (c.position_xid, c.position_id)) as lag_seconds
from event_consumers c order by c.name`;

export interface PruneReport {
  /** Events deleted. */
  readonly deleted: number;
  /** Events older than the cut kept because a registered consumer has not acknowledged them. */
  readonly keptUnacknowledged: number;
}

/**
 * Deletes the events received more than `olderThanDays` days ago that every registered consumer
 * has acknowledged, in batches of `batchSize` (each its own short transaction). An event younger
 * than the idempotency window (`IDEMPOTENCY_WINDOW_DAYS`, CONTRACT §5) is never deleted: its key
 * still answers a retry with the original event_id.
 * @throws RangeError when `olderThanDays` is below the window or not an integer.
 */
export async function pruneEvents(
  pool: pg.Pool,
  olderThanDays: number,
  options: { readonly batchSize?: number } = {},
): Promise<PruneReport> {
  if (!Number.isSafeInteger(olderThanDays) || olderThanDays < IDEMPOTENCY_WINDOW_DAYS)
    throw new RangeError(
      `--older-than must be a whole number of days, at least ${IDEMPOTENCY_WINDOW_DAYS} (the idempotency window CONTRACT §5 promises), not ${olderThanDays}`,
    );
  const batchSize = options.batchSize ?? 10_000;
  let deleted = 0;
  for (;;) {
    const result = await guarded("pruning events", () =>
      pool.query<{ deleted: string }>(PRUNE, [String(olderThanDays), batchSize]),
    );
    const n = Number(result.rows[0]!.deleted);
    deleted += n;
    if (n < batchSize) break;
  }
  const kept = await guarded("pruning events", () =>
    pool.query<{ kept: string }>(
      `select count(*)::text as kept from events e
       where e.received_at < now() - make_interval(days => $1::int)
         and exists (select 1 from event_consumers c where (e.xid, e.id) > (c.position_xid, c.position_id))`,
      [String(olderThanDays)],
    ),
  );
  return { deleted, keptUnacknowledged: Number(kept.rows[0]!.kept) };
}

/**
 * One batch of prune: old events at or before every consumer's checkpoint. The consumer rows are
 * read FOR SHARE, so a `reset` backwards waits for the batch, and a reset's target is never deleted
 * under it.
 */
const PRUNE = `with horizon as materialized (
  select position_xid as xid, position_id as id
  from (select position_xid, position_id from event_consumers for share) c
  order by position_xid, position_id limit 1
),
doomed as (
  select e.id from events e
  where e.received_at < now() - make_interval(days => $1::int)
    and not exists (select 1 from horizon h where (e.xid, e.id) > (h.xid, h.id))
  order by e.xid, e.id limit $2
),
gone as (delete from events where id in (select id from doomed) returning 1)
select count(*)::text as deleted from gone`;

/** A place in the log's order, for a reader that keeps no checkpoint (`partner-yield events tail`). */
export interface LogPosition {
  readonly xid: string;
  readonly id: number;
}

type LogRow = EventRow & { xid: string };

/**
 * The events passing `filter` after `after`, in log order and below the fence, as a consumer reads
 * them but with no checkpoint (nothing registered: prune is not held back). `position` is where to
 * read next.
 */
export async function readLog(
  pool: pg.Pool,
  after: LogPosition,
  limit: number,
  filter: EventFilter = {},
): Promise<{ events: StoredEvent[]; position: LogPosition }> {
  const result = await guarded("reading events", () =>
    pool.query<LogRow>(
      `select ${COLUMNS} from events e
       where (e.xid, e.id) > ($1::xid8, $2::bigint)
         and e.xid < pg_snapshot_xmin(pg_current_snapshot()) and ${filterSql(4)}
       order by e.xid, e.id limit $3`,
      [after.xid, String(after.id), checkLimit(limit), ...filterValues(filter)],
    ),
  );
  const last = result.rows.at(-1);
  return {
    events: result.rows.map(toStoredEvent),
    position: last === undefined ? after : { xid: last.xid, id: Number(last.id) },
  };
}

/** The last `count` events passing `filter` (0: none), and the position after them. */
export async function tailStart(
  pool: pg.Pool,
  count: number,
  filter: EventFilter = {},
): Promise<{ events: StoredEvent[]; position: LogPosition }> {
  return guarded("reading events", async () => {
    const client = await pool.connect();
    try {
      // One snapshot for both reads.
      await client.query("begin isolation level repeatable read");
      const fence = (await client.query<{ xmin: string }>(FENCE)).rows[0]!.xmin;
      const end = await client.query<{ xid: string; id: string }>(
        "select xid::text as xid, id::text as id from events where xid < $1::xid8 order by xid desc, id desc limit 1",
        [fence],
      );
      const rows =
        count === 0
          ? []
          : (
              await client.query<LogRow>(
                `select ${COLUMNS} from events e where e.xid < $1::xid8 and ${filterSql(2)}
                 order by e.xid desc, e.id desc limit $5`,
                [fence, ...filterValues(filter), count],
              )
            ).rows.reverse();
      await client.query("commit");
      const last = end.rows[0];
      return {
        events: rows.map(toStoredEvent),
        position: last === undefined ? { xid: "0", id: 0 } : { xid: last.xid, id: Number(last.id) },
      };
    } catch (error) {
      await client.query("rollback").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  });
}

function filterValues(filter: EventFilter): (string | null)[] {
  return [filter.partner ?? null, filter.environment ?? null, filter.type ?? null];
}

/** The newest event id, or 0: where `events tail` starts. */
export async function lastEventId(pool: pg.Pool): Promise<number> {
  const result = await guarded("reading events", () =>
    pool.query<{ id: string | null }>("select max(id)::text as id from events"),
  );
  return Number(result.rows[0]!.id ?? 0);
}
