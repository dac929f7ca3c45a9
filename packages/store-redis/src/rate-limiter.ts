/**
 * A `RateLimiter` on Redis, shared by every instance: the exact rolling window of CONTRACT §7 (and
 * the failed-authentication limit of §4), one atomic Lua script per decision, with the same
 * decisions and headers as `MemoryRateLimiter`. The hits of one partner's quota made in the same
 * turn of the event loop (the requests a server reads together), or while that key's previous run
 * is in flight, share one script run, which decides them as if they came one after the other. A
 * partner's window is stored by run (one sorted-set member per run that counted hits, with their
 * number), so a run costs Redis the same however many hits it carries; a key holds at most `limit`
 * members and expires with its last hit. Failed-authentication keys are bounded in number as in
 * memory (`maxFailedAuthAddresses`, one shared overflow key past it).
 */
import { type RateDecision, type RateLimiter, StoreUnavailableError } from "@partner-yield/core";
import {
  DEFAULT_MAX_FAILED_AUTH_ADDRESSES,
  FAILED_AUTH_KEY_PREFIX,
  FAILED_AUTH_OVERFLOW_KEY,
} from "@partner-yield/core/backends";
import { Redis } from "ioredis";
import { FAILED_AUTH_SCRIPT, RATE_LIMIT_BATCH_SCRIPT, RATE_LIMIT_MANY_SCRIPT } from "./rate-limit-script.js";

/** Seconds a client is asked to wait when Redis cannot answer. */
export const RETRY_AFTER_SECONDS = 1;

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). */
  readonly url: string;
  /** Time one command may take before it fails. Default 1000 ms. */
  readonly commandTimeoutMs?: number | undefined;
  /** Time to open a connection. Default 2000 ms. */
  readonly connectTimeoutMs?: number | undefined;
  /** Called with connection errors (the client reconnects by itself). */
  readonly onError?: ((error: Error) => void) | undefined;
}

/**
 * An ioredis client that fails fast instead of queueing: no offline queue (a command while
 * disconnected fails at once), a timeout on every command, and reconnection forever with a backoff
 * capped at 2 s, so the limiter recovers by itself when Redis returns. Connects before resolving.
 * @throws StoreUnavailableError when Redis cannot be reached.
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<Redis> {
  const redis = new Redis(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 1000,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    retryStrategy: (attempt) => Math.min(100 * attempt, 2000),
    // Commands made in the same turn share one write. The limiter sends the partner-quota runs of
    // a turn as one command itself (RedisRateLimiter's #flush): through autopipelining a lone run
    // would pay for a pipeline of its own.
    enableAutoPipelining: true,
    autoPipeliningIgnoredCommands: [RATE_LIMIT_MANY_COMMAND, RATE_LIMIT_BATCH_COMMAND],
  });
  // ioredis prints unhandled 'error' events; the limiter reports failures as 503s instead.
  redis.on("error", (error: Error) => options.onError?.(error));
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new StoreUnavailableError(
      `redis: cannot connect: ${(error as Error).message}`,
      RETRY_AFTER_SECONDS,
      {
        cause: error,
      },
    );
  }
  return redis;
}

export interface RedisRateLimiterOptions {
  /** A connected client (see `connectRedis`); closed by `close()` only when `ownsClient`. */
  readonly redis: Redis;
  /** Whether `close()` quits the client. Default false. */
  readonly ownsClient?: boolean | undefined;
  /** Prefix of every key, so deployments can share a Redis. Default "partner-yield:rate:". */
  readonly keyPrefix?: string | undefined;
  /** Milliseconds since the epoch, for tests; default Redis's own clock, one for every instance. */
  readonly now?: (() => number) | undefined;
  /**
   * Most failed-authentication keys (`FAILED_AUTH_KEY_PREFIX`…, one per client address bucket)
   * with hits in the window at once, across every instance; default 50,000, as in memory. Past
   * it, an address not among them is limited in ONE shared bucket (`FAILED_AUTH_OVERFLOW_KEY`,
   * same limit). They live under one hash tag (`{auth}`, one Redis Cluster slot) with their index.
   */
  readonly maxFailedAuthAddresses?: number | undefined;
}

/**
 * The name the limiter gives `RATE_LIMIT_MANY_SCRIPT` on its client. A client of your own with
 * `enableAutoPipelining` should list it and `RATE_LIMIT_BATCH_COMMAND` in
 * `autoPipeliningIgnoredCommands`, as `connectRedis` does: the limiter groups these runs itself.
 */
export const RATE_LIMIT_MANY_COMMAND = "partnerYieldRateLimitMany";

/** The name the limiter gives `RATE_LIMIT_BATCH_SCRIPT` on its client (see RATE_LIMIT_MANY_COMMAND). */
export const RATE_LIMIT_BATCH_COMMAND = "partnerYieldRateLimitBatch";

/**
 * Most keys one run of `RATE_LIMIT_BATCH_SCRIPT` decides; a turn with more sends several runs. It
 * bounds how long one run holds Redis, whose other clients wait while a script runs.
 */
const MAX_KEYS_A_RUN = 64;

type ScriptReply = [allowed: number, counted: number, waitMs: number];
type ManyReply = [counted: number, used: number, oldestWaitMs: number, refusedWaitMs: number];
/** `RATE_LIMIT_MANY_SCRIPT`'s keys (the runs, the state hash), then its arguments. */
type ManyArgs = [zset: string, state: string, limit: number, windowMs: number, n: number, now: number];

/** Hits of one key waiting for the script run they share. */
interface PendingHits {
  readonly limit: number;
  readonly windowMs: number;
  readonly waiters: { resolve: (decision: RateDecision) => void; reject: (error: unknown) => void }[];
}

type WithScript = Redis & {
  partnerYieldFailedAuth(
    zset: string,
    sequence: string,
    index: string,
    overflowZset: string,
    overflowSequence: string,
    limit: number,
    windowMs: number,
    count: "0" | "1",
    now: number,
    maxKeys: number,
    member: string,
  ): Promise<ScriptReply>;
  partnerYieldRateLimitMany(...args: ManyArgs): Promise<ManyReply>;
  /** numkeys, the keys (two a partner), now, then limit, window and n for each partner. */
  partnerYieldRateLimitBatch(...args: (string | number)[]): Promise<unknown[][]>;
};

/**
 * @example
 * const redis = await connectRedis({ url: process.env.REDIS_URL! });
 * const rateLimiter = new RedisRateLimiter({ redis, ownsClient: true });
 * const api = createPartnerApi({ environment: "production", ...stores, rateLimiter });
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #redis: WithScript;
  readonly #owns: boolean;
  readonly #prefix: string;
  readonly #now: (() => number) | undefined;
  readonly #maxAuthKeys: number;
  /** A Redis Cluster client: no script run across keys of several partners. */
  readonly #cluster: boolean;
  /** Partner-quota hits not yet sent, by key, in the order made. */
  readonly #pending = new Map<string, PendingHits>();
  /** Keys with a script run in flight: their new hits wait for its answer, then go together. */
  readonly #busy = new Set<string>();
  #scheduled = false;

  constructor(options: RedisRateLimiterOptions) {
    const redis = options.redis as WithScript;
    if (typeof redis.partnerYieldRateLimitMany !== "function")
      redis.defineCommand(RATE_LIMIT_MANY_COMMAND, { numberOfKeys: 2, lua: RATE_LIMIT_MANY_SCRIPT });
    if (typeof redis.partnerYieldRateLimitBatch !== "function")
      redis.defineCommand(RATE_LIMIT_BATCH_COMMAND, { lua: RATE_LIMIT_BATCH_SCRIPT });
    if (typeof redis.partnerYieldFailedAuth !== "function")
      redis.defineCommand("partnerYieldFailedAuth", { numberOfKeys: 5, lua: FAILED_AUTH_SCRIPT });
    this.#maxAuthKeys = options.maxFailedAuthAddresses ?? DEFAULT_MAX_FAILED_AUTH_ADDRESSES;
    if (!Number.isSafeInteger(this.#maxAuthKeys) || this.#maxAuthKeys < 1)
      throw new RangeError(`maxFailedAuthAddresses must be a positive integer, not ${this.#maxAuthKeys}`);
    this.#redis = redis;
    this.#cluster = (redis as { isCluster?: boolean }).isCluster === true;
    this.#owns = options.ownsClient ?? false;
    this.#prefix = options.keyPrefix ?? "partner-yield:rate:";
    this.#now = options.now;
  }

  hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    if (key.startsWith(FAILED_AUTH_KEY_PREFIX)) return this.#decide(key, limit, windowMs, "1");
    let pending = this.#pending.get(key);
    if (pending !== undefined && (pending.limit !== limit || pending.windowMs !== windowMs)) {
      // Another limit for the same key in the same turn (a quota changed mid-flight): alone.
      return this.#decide(key, limit, windowMs, "1");
    }
    if (pending === undefined) {
      pending = { limit, windowMs, waiters: [] };
      this.#pending.set(key, pending);
      if (!this.#scheduled && !this.#busy.has(key)) {
        this.#scheduled = true;
        queueMicrotask(this.#flush);
      }
    }
    const waiters = pending.waiters;
    return new Promise((resolve, reject) => {
      waiters.push({ resolve, reject });
    });
  }

  peek(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    return this.#decide(key, limit, windowMs, "0");
  }

  /** Resolves when Redis answers; throws `StoreUnavailableError` otherwise. */
  async ping(): Promise<void> {
    try {
      await this.#redis.ping();
    } catch (error) {
      throw unavailable("ping", error);
    }
  }

  async close(): Promise<void> {
    if (!this.#owns) return;
    if (this.#redis.status === "ready") await this.#redis.quit().catch(() => this.#redis.disconnect());
    else this.#redis.disconnect();
  }

  /**
   * Sends the waiting partner-quota hits, each key's hits decided together, keys in the order first
   * hit. A key with a run in flight keeps its hits until that run answers: under load the hits of
   * several turns then share one run, and one key never has two runs racing each other. The keys of one
   * flush go out together as one run of `RATE_LIMIT_BATCH_SCRIPT` (up to MAX_KEYS_A_RUN keys a
   * run), a lone key as a run of `RATE_LIMIT_MANY_SCRIPT`; each a plain command: ioredis's
   * autopipelining would build a pipeline for it, which costs the client about as much CPU again as
   * the command itself (docs/performance.md).
   */
  readonly #flush = (): void => {
    this.#scheduled = false;
    const ready: [string, PendingHits][] = [];
    for (const [key, pending] of this.#pending) {
      if (this.#busy.has(key)) continue;
      this.#pending.delete(key);
      this.#busy.add(key);
      ready.push([key, pending]);
    }
    // A script's keys must lie in one slot of a Redis Cluster: there each key's run goes alone
    // (the client's autopipelining, when on, groups them by node).
    if (ready.length === 1 || this.#cluster) {
      for (const [key, pending] of ready)
        this.#settle(
          key,
          pending,
          this.#runMany(key, pending.limit, pending.windowMs, pending.waiters.length),
        );
      return;
    }
    for (let from = 0; from < ready.length; from += MAX_KEYS_A_RUN) {
      const some = ready.slice(from, from + MAX_KEYS_A_RUN);
      const replies = this.#runBatch(some);
      for (const [i, [key, pending]] of some.entries())
        this.#settle(
          key,
          pending,
          replies.then((all) => {
            const reply = all[i]!;
            if (reply instanceof Error) throw reply;
            return reply;
          }),
        );
    }
  };

  /**
   * One run of `RATE_LIMIT_BATCH_SCRIPT` for the hits of several keys: each key's reply, or its
   * own error when Redis refused one of its commands (the whole run fails when Redis does).
   */
  async #runBatch(keys: readonly [string, PendingHits][]): Promise<(ManyReply | Error)[]> {
    const now = this.#now === undefined ? -1 : this.#now();
    const args: (string | number)[] = [keys.length * 2];
    for (const [key] of keys) {
      const base = this.#base(key);
      args.push(base, `${base}:n`);
    }
    args.push(now);
    for (const [, pending] of keys) args.push(pending.limit, pending.windowMs, pending.waiters.length);
    const replies = await this.#redis.partnerYieldRateLimitBatch(...args);
    if (!Array.isArray(replies) || replies.length !== keys.length)
      throw new Error(`the batch script answered ${JSON.stringify(replies)} for ${keys.length} keys`);
    return replies.map((reply) =>
      Number(reply[0]) < 0 ? new Error(String(reply[1])) : (reply.map(Number) as ManyReply),
    );
  }

  /** The key of `key`'s run set; its state hash is this + `:n`. */
  #base(key: string): string {
    // The hash tag keeps both keys in one slot of a Redis Cluster. `:w` names the window stored by
    // run (see RATE_LIMIT_MANY_SCRIPT), apart from the keys of releases that stored it by hit.
    return `${this.#prefix}{${key}}:w`;
  }

  /** Settles the hits of a run when it answers, then lets the key's next hits go. */
  #settle(key: string, pending: PendingHits, reply: Promise<ManyReply>): void {
    void this.#decideMany(pending, reply)
      .catch((error: unknown) => {
        // Not Redis failing (that is settled in #decideMany) but this code: no hit hangs.
        const failure = unavailable("rate-limit decision", error);
        for (const waiter of pending.waiters) waiter.reject(failure);
      })
      .then(() => {
        this.#busy.delete(key);
        // The keys whose runs answer together go out together again.
        if (this.#pending.has(key) && !this.#scheduled) {
          this.#scheduled = true;
          queueMicrotask(this.#flush);
        }
      });
  }

  /** Decides `pending.waiters.length` hits of `key` at once, in the order they were made. */
  async #decideMany(pending: PendingHits, run: Promise<ManyReply>): Promise<void> {
    const { limit, waiters } = pending;
    let reply: ManyReply;
    try {
      reply = await run;
    } catch (error) {
      const failure = unavailable("rate-limit decision", error);
      for (const waiter of waiters) waiter.reject(failure);
      return;
    }
    const [counted, used, oldestWaitMs, refusedWaitMs] = reply;
    const resetSeconds = Math.max(1, Math.ceil(oldestWaitMs / 1000));
    const retry = Math.max(1, Math.ceil(refusedWaitMs / 1000));
    for (const [i, waiter] of waiters.entries()) {
      waiter.resolve(
        i < counted
          ? {
              allowed: true,
              limit,
              remaining: Math.max(0, limit - (used + i + 1)),
              resetSeconds,
              retryAfterSeconds: 0,
            }
          : { allowed: false, limit, remaining: 0, resetSeconds: retry, retryAfterSeconds: retry },
      );
    }
  }

  /** One run of `RATE_LIMIT_MANY_SCRIPT` for `n` hits of a partner's quota (0: a peek), sent at once. */
  async #runMany(key: string, limit: number, windowMs: number, n: number): Promise<ManyReply> {
    const now = this.#now === undefined ? -1 : this.#now();
    const base = this.#base(key);
    const reply = await this.#redis.partnerYieldRateLimitMany(base, `${base}:n`, limit, windowMs, n, now);
    return reply.map(Number) as ManyReply;
  }

  async #decide(key: string, limit: number, windowMs: number, count: "0" | "1"): Promise<RateDecision> {
    if (!key.startsWith(FAILED_AUTH_KEY_PREFIX)) return this.#decidePartner(key, limit, windowMs, count);
    const now = this.#now === undefined ? -1 : this.#now();
    let reply: ScriptReply;
    try {
      // One hash tag for every failed-authentication key, their index and the overflow key.
      const tag = `${this.#prefix}{auth}:`;
      const base = tag + key;
      const overflow = tag + FAILED_AUTH_OVERFLOW_KEY;
      reply = await this.#redis.partnerYieldFailedAuth(
        base,
        `${base}:seq`,
        `${tag}index`,
        overflow,
        `${overflow}:seq`,
        limit,
        windowMs,
        count,
        now,
        this.#maxAuthKeys,
        key,
      );
    } catch (error) {
      throw unavailable("rate-limit decision", error);
    }
    const [allowed, counted, waitMs] = reply.map(Number) as ScriptReply;
    return decision(allowed !== 0, limit, counted, waitMs);
  }

  /** A partner-quota hit (`count` "1") or peek ("0") alone: one run of the many-hits script. */
  async #decidePartner(
    key: string,
    limit: number,
    windowMs: number,
    count: "0" | "1",
  ): Promise<RateDecision> {
    let reply: ManyReply;
    try {
      reply = await this.#runMany(key, limit, windowMs, count === "1" ? 1 : 0);
    } catch (error) {
      throw unavailable("rate-limit decision", error);
    }
    const [counted, used, oldestWaitMs, refusedWaitMs] = reply;
    const allowed = count === "1" ? counted === 1 : used < limit;
    return decision(allowed, limit, used + counted, allowed ? oldestWaitMs : refusedWaitMs);
  }
}

/**
 * The same arithmetic as MemoryRateLimiter: a refusal waits `waitMs` (until the hit it waits for
 * leaves); an allowed decision leaves `limit - counted`, and the window resets when its oldest hit
 * leaves, in `waitMs` (0 when it holds none).
 */
function decision(allowed: boolean, limit: number, counted: number, waitMs: number): RateDecision {
  if (!allowed) {
    const retry = Math.max(1, Math.ceil(waitMs / 1000));
    return { allowed: false, limit, remaining: 0, resetSeconds: retry, retryAfterSeconds: retry };
  }
  return {
    allowed: true,
    limit,
    remaining: Math.max(0, limit - counted),
    resetSeconds: counted === 0 ? 0 : Math.max(1, Math.ceil(waitMs / 1000)),
    retryAfterSeconds: 0,
  };
}

function unavailable(operation: string, error: unknown): StoreUnavailableError {
  return new StoreUnavailableError(
    `redis: ${operation} failed: ${error instanceof Error ? error.message : String(error)}`,
    RETRY_AFTER_SECONDS,
    { cause: error },
  );
}
