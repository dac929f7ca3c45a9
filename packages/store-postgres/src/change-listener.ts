/**
 * The read cache's ear on the database: a dedicated connection (a `pg.Client`, never one of the
 * pool's) that runs `LISTEN partner_yield_changes` (the channel of migration 0004's triggers) and
 * passes each notification on. It tells its sink when it is subscribed, when a heartbeat went
 * through (a `select 1` on the same connection: PostgreSQL sends the notifications it holds for
 * the connection before that answer, so every change committed before the heartbeat was sent has
 * been passed on) and when it is lost; then it reconnects by itself, waiting longer after each
 * failure. A heartbeat unanswered within its timeout counts as lost: that is how a connection that
 * died silently (a network that drops packets) is noticed; TCP keepalive is on as well.
 */
import pg from "pg";

/** The channel migration 0004's triggers notify. */
export const CHANGE_CHANNEL = "partner_yield_changes";

/** One statement's change to a table: the keys of the rows it touched, or undefined for all of them. */
export interface TableChange {
  readonly table: string;
  readonly keys: readonly (readonly string[])[] | undefined;
}

/** What the listener tells (the read cache). */
export interface ChangeSink {
  /** LISTEN is in effect since `sentAt` (ms since the epoch): changes after it will be passed on. */
  subscribed(sentAt: number): void;
  /** A heartbeat sent at `sentAt` was answered: every change committed before it was passed on. */
  alive(sentAt: number): void;
  changed(change: TableChange): void;
  /** The connection is gone (or never subscribed): changes may be missed until `subscribed`. */
  lost(error: Error): void;
}

export interface ChangeListenerOptions {
  /** How to connect (the pool's options, or your own); the application name is the listener's. */
  readonly connection: pg.ClientConfig;
  /** Shown in `pg_stat_activity`. Default "partner-yield-listener". */
  readonly applicationName?: string | undefined;
  /** Time between heartbeats. Default 1000 ms. */
  readonly heartbeatIntervalMs?: number | undefined;
  /** A heartbeat (or connecting and subscribing) unanswered this long: the connection is lost. Default 2000 ms. */
  readonly heartbeatTimeoutMs?: number | undefined;
  /** First wait before reconnecting, doubled after each failure up to `reconnectMaxMs`. Default 100 ms. */
  readonly reconnectMinMs?: number | undefined;
  /** Default 5000 ms. */
  readonly reconnectMaxMs?: number | undefined;
}

/**
 * @example
 * const listener = new ChangeListener({ connection: { connectionString } }, cache);
 * listener.start(); // … on shutdown:
 * await listener.close();
 */
export class ChangeListener {
  readonly heartbeatIntervalMs: number;
  readonly heartbeatTimeoutMs: number;
  readonly #options: ChangeListenerOptions;
  readonly #sink: ChangeSink;
  #client: pg.Client | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #failures = 0;
  #closed = false;
  #started = false;

  constructor(options: ChangeListenerOptions, sink: ChangeSink) {
    this.#options = options;
    this.#sink = sink;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 1000;
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 2000;
  }

  /** Connects and subscribes, in the background; idempotent. */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    void this.#connect();
  }

  /** Ends the connection and stops reconnecting; idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) {
      this.#sink.lost(new Error("the read cache is closed"));
      await endClient(client);
    }
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const timeout = this.heartbeatTimeoutMs;
    const client = new pg.Client({
      ...this.#options.connection,
      application_name: this.#options.applicationName ?? "partner-yield-listener",
      connectionTimeoutMillis: timeout,
      keepAlive: true,
      keepAliveInitialDelayMillis: Math.max(1000, this.heartbeatIntervalMs),
      // The client-side bound of every statement on it (the heartbeat's too).
      query_timeout: timeout,
    } as pg.ClientConfig);
    this.#client = client;
    client.on("error", (error) => this.#lost(client, error));
    client.on("end", () => this.#lost(client, new Error("the listener's connection ended")));
    client.on("notification", (message) => {
      if (this.#client !== client || message.channel !== CHANGE_CHANNEL) return;
      const change = parseChange(message.payload);
      // A payload this code cannot read: drop everything of every table rather than guess.
      this.#sink.changed(change ?? { table: "*", keys: undefined });
    });
    try {
      await client.connect();
      const sentAt = Date.now();
      await client.query(`listen ${CHANGE_CHANNEL}`);
      const triggers = await client.query<{ present: boolean }>(
        "select to_regproc('partner_yield_notify_change') is not null as present",
      );
      if (!triggers.rows[0]?.present)
        throw new Error(
          "the database announces no changes (schema before version 4): run `partner-yield db migrate`",
        );
      if (this.#client !== client) return;
      this.#failures = 0;
      this.#sink.subscribed(sentAt);
      this.#beatLater(client);
    } catch (error) {
      this.#lost(client, error as Error);
    }
  }

  #beatLater(client: pg.Client): void {
    this.#timer = setTimeout(() => void this.#beat(client), this.heartbeatIntervalMs);
    this.#timer.unref();
  }

  async #beat(client: pg.Client): Promise<void> {
    if (this.#client !== client) return;
    const sentAt = Date.now();
    try {
      await client.query("select 1");
    } catch (error) {
      this.#lost(client, error as Error);
      return;
    }
    if (this.#client !== client) return;
    this.#sink.alive(sentAt);
    this.#beatLater(client);
  }

  #lost(client: pg.Client, error: Error): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    clearTimeout(this.#timer);
    void endClient(client);
    this.#sink.lost(error);
    if (this.#closed) return;
    const min = this.#options.reconnectMinMs ?? 100;
    const wait = Math.min(this.#options.reconnectMaxMs ?? 5000, min * 2 ** this.#failures);
    this.#failures = Math.min(this.#failures + 1, 30);
    this.#timer = setTimeout(() => void this.#connect(), wait);
    this.#timer.unref();
  }
}

/** `{"table": "api_keys", "keys": [["…"]]}` or `{"table": "api_keys"}`; undefined when it is neither. */
export function parseChange(payload: string | undefined): TableChange | undefined {
  try {
    const parsed = JSON.parse(payload ?? "") as { table?: unknown; keys?: unknown };
    if (typeof parsed.table !== "string") return undefined;
    if (parsed.keys === undefined) return { table: parsed.table, keys: undefined };
    if (
      !Array.isArray(parsed.keys) ||
      !parsed.keys.every((key) => Array.isArray(key) && key.every((part) => typeof part === "string"))
    )
      return undefined;
    return { table: parsed.table, keys: parsed.keys as string[][] };
  } catch {
    return undefined;
  }
}

/** Ends a client, and destroys its socket when the server does not answer the goodbye in 1 s. */
async function endClient(client: pg.Client): Promise<void> {
  client.removeAllListeners("notification");
  client.on("error", () => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    client.end().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        (
          client as unknown as { connection?: { stream?: { destroy(): void } } }
        ).connection?.stream?.destroy();
        resolve();
      }, 1000);
    }),
  ]);
  clearTimeout(timer);
}
