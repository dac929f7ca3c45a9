/**
 * What the runner hands every comparison server (env `BENCH_SPEC`, JSON): the port, and the
 * response our server really gave for the scenario (status, headers, body), captured first.
 * @module
 */
import { randomBytes } from "node:crypto";

export interface CapturedResponse {
  readonly status: number;
  /** Lower-case names, without Date, Connection, Keep-Alive and Content-Length (node adds those). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface ServerSpec {
  readonly port: number;
  /** The scenario's answer as our server gave it. */
  readonly response: CapturedResponse;
  /** True when the request has a JSON body the server reads and parses (the signed POST). */
  readonly readsBody: boolean;
  /** The API key the comparison frameworks accept (their key check hashes it, as ours does). */
  readonly apiKey: string;
  /**
   * The bare server only: microseconds of busy work (a loop on the clock, no allocation) before
   * each answer, for the runner's `--calibrate` rows. Absent or 0: none.
   */
  readonly workMicros?: number;
  /**
   * The bare server only (the runner's `--batched-bare`): answer the requests read in one turn of
   * the event loop together, after that turn's reads, as our listener hands them to the core.
   */
  readonly batched?: boolean;
  /**
   * The bare server only (the runner's `--durable-bare`): each POST's body is committed to
   * PostgreSQL before its answer, in a table like pgbench's insert's, with group commit as our
   * event store does it (one multi-row insert in flight).
   */
  readonly durable?: DurableSpec;
}

/** Where the durable bare server commits the bodies. */
export interface DurableSpec {
  readonly databaseUrl: string;
  /** The absolute path of the `pg` module to load (store-postgres's own). */
  readonly pgModule: string;
}

export function readSpec(): ServerSpec {
  const raw = process.env["BENCH_SPEC"];
  if (raw === undefined)
    throw new Error("BENCH_SPEC is not set (these servers are started by bench/http/run.ts)");
  return JSON.parse(raw) as ServerSpec;
}

/** Ids of our shape (`req_` + 12 hex + base-36 counter) at the same per-request cost as ours. */
export function requestIds(): () => string {
  const prefix = `req_${randomBytes(6).toString("hex")}`;
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36).padStart(6, "0")}`;
}

/**
 * The `ratelimit` header counts down per request as ours does, so the bytes stay the same length
 * and the same work (a string built per request) is done.
 */
export function rateLimitHeader(captured: string | undefined): (() => string) | undefined {
  if (captured === undefined) return undefined;
  const match = /^(.*;r=)(\d+)(;t=\d+)$/.exec(captured);
  if (match === null) return () => captured;
  const [, before, remaining, after] = match;
  let r = Number(remaining);
  return () => `${before}${r > 0 ? r-- : 0}${after}`;
}

/** Exits on SIGTERM (the runner's stop) after closing the server. */
export function exitOnSigterm(close: () => void): void {
  process.once("SIGTERM", () => {
    close();
    process.exit(0);
  });
}
