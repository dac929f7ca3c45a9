/**
 * One line when a store goes down and one when it is back, instead of a stack trace per request
 * that failed in between. Something suspects the stores (a request answered `503` with a
 * `StoreUnavailableError`, the read cache's listening connection lost): every store's check (the
 * `/readyz` ones) runs, at most once a second; a check that fails marks its store down
 * (`store_down`, level `error`, with why), and the failing ones are checked again every second
 * until each passes (`store_up`, level `info`, with how long it was down). Without suspicion no
 * check runs: an idle server costs its stores nothing.
 * @module
 */
import { type StoreLogEntry, settlesWithin, storeLogEntry } from "@partner-yield/node-adapter";

export interface StoreWatchOptions {
  /** The stores by name, each with its check (`/readyz`'s `readinessChecks`). */
  readonly checks: Readonly<Record<string, () => Promise<void>>>;
  /** Where the lines go (`resolveStoreLog`). */
  readonly log: (entry: StoreLogEntry) => void;
  /** Least time between two rounds of checks, and between the checks of a store down. Default 1000 ms. */
  readonly intervalMs?: number | undefined;
  /** A check unanswered this long fails. Default 2000 ms (as `/readyz`'s). */
  readonly checkTimeoutMs?: number | undefined;
  /** Masks what an error message may quote (a connection URL's password). */
  readonly redact?: ((text: string) => string) | undefined;
  /** Milliseconds; default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

export interface StoreWatch {
  /** Something failed that a store may be behind: the stores are checked (now, or within a second). */
  suspect(): void;
  /** The stores down now, by name, with when they went down (ms since the epoch). */
  readonly down: ReadonlyMap<string, number>;
  /** Resolves when the round of checks under way (if any) is done. For tests. */
  settled(): Promise<void>;
  /** No more checks. */
  close(): void;
}

/**
 * @example
 * const watch = watchStores({ checks: readinessChecks, log: resolveStoreLog("json")! });
 * createNodePartnerApi({ …, onStoreError: () => watch.suspect() });
 */
export function watchStores(options: StoreWatchOptions): StoreWatch {
  const intervalMs = options.intervalMs ?? 1000;
  const timeoutMs = options.checkTimeoutMs ?? 2000;
  const now = options.now ?? Date.now;
  const redact = options.redact ?? ((text: string) => text);
  const down = new Map<string, number>();
  let running: Promise<void> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastRound = Number.NEGATIVE_INFINITY;
  let closed = false;

  const check = async (name: string): Promise<string | undefined> => {
    try {
      const settled = await settlesWithin(options.checks[name]!(), timeoutMs);
      return settled ? undefined : `no answer within ${timeoutMs} ms`;
    } catch (error) {
      return redact(error instanceof Error ? error.message : String(error));
    }
  };

  const round = async (): Promise<void> => {
    lastRound = now();
    const names = Object.keys(options.checks);
    const results = await Promise.all(names.map(check));
    if (closed) return;
    names.forEach((name, i) => {
      const failure = results[i];
      const since = down.get(name);
      if (failure !== undefined && since === undefined) {
        down.set(name, now());
        emit(storeLogEntry("store_down", name, { error: failure }));
      } else if (failure === undefined && since !== undefined) {
        down.delete(name);
        emit(storeLogEntry("store_up", name, { down_ms: Math.max(0, now() - since) }));
      }
    });
  };

  const emit = (entry: StoreLogEntry) => {
    try {
      options.log(entry);
    } catch {
      // A log that throws must not stop the watch.
    }
  };

  const start = () => {
    timer = undefined;
    if (closed || running !== undefined) return;
    running = round().finally(() => {
      running = undefined;
      // A store down is checked again until it is back.
      if (down.size > 0) schedule();
    });
  };

  const schedule = () => {
    if (closed || timer !== undefined || running !== undefined) return;
    const wait = Math.max(0, lastRound + intervalMs - now());
    timer = setTimeout(start, wait);
    timer.unref();
  };

  return {
    suspect: schedule,
    down,
    settled: async () => {
      await running;
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
