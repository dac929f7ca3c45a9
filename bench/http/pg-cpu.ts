/**
 * PostgreSQL's own CPU time, which the benchmarked server's `process.cpuUsage()` cannot see: the
 * utime + stime (/proc/PID/stat) of the PostgreSQL processes on this machine, split into the
 * backends (and autovacuum workers) of one database, found by its name in their process title
 * (`postgres: 15/main: postgres py_bench_… 127.0.0.1(41234) idle`), and the server-wide background
 * processes (postmaster, checkpointer, background writer, walwriter, autovacuum launcher, …), which
 * work for every database on the server. Linux only; elsewhere (or with PostgreSQL on another
 * machine) the reader finds nothing and says so.
 * @module
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** CPU µs per process id at one moment, by kind. */
export interface PgCpuSample {
  readonly own: ReadonlyMap<number, number>;
  readonly background: ReadonlyMap<number, number>;
}

const BACKGROUND =
  /^postgres: (?:\S+: )?(?:checkpointer|background writer|walwriter|autovacuum launcher|logical replication launcher|archiver|stats collector|startup)\b/;

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, else 100). */
export function clockTicks(): number {
  try {
    const n = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

/**
 * A reader of the CPU of the PostgreSQL processes for `database`; undefined where /proc cannot be
 * read (not Linux).
 */
export function pgCpuReader(database: string): (() => PgCpuSample) | undefined {
  try {
    readFileSync("/proc/self/stat", "utf8");
  } catch {
    return undefined;
  }
  const microsPerTick = 1_000_000 / clockTicks();
  const ownTitle = new RegExp(` ${database}(?: |$)`);
  return () => {
    const own = new Map<number, number>();
    const background = new Map<number, number>();
    for (const dir of readdirSync("/proc")) {
      if (!/^\d+$/.test(dir)) continue;
      try {
        if (readFileSync(`/proc/${dir}/comm`, "utf8").trim() !== "postgres") continue;
        const title = readFileSync(`/proc/${dir}/cmdline`, "utf8").replace(/\0+$/, "").replace(/\0/g, " ");
        const kind = ownTitle.test(title)
          ? own
          : BACKGROUND.test(title) || !title.startsWith("postgres:")
            ? background
            : undefined;
        if (kind === undefined) continue;
        const stat = readFileSync(`/proc/${dir}/stat`, "utf8");
        // Fields after "(comm) ": state is field 3, utime field 14, stime field 15.
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        kind.set(Number(dir), (Number(fields[11]) + Number(fields[12])) * microsPerTick);
      } catch {
        // The process ended while being read.
      }
    }
    return { own, background };
  };
}

/**
 * CPU µs spent between two samples: by processes present in both, plus the whole time of those
 * born in between (a process that ended in between is lost; the server's pool keeps its
 * connections for 30 s idle, longer than a round's gap).
 */
export function pgCpuSince(before: PgCpuSample, after: PgCpuSample): { own: number; background: number } {
  const delta = (a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>) => {
    let sum = 0;
    for (const [pid, micros] of b) sum += micros - (a.get(pid) ?? 0);
    return sum;
  };
  return { own: delta(before.own, after.own), background: delta(before.background, after.background) };
}

/**
 * Reads `read` every `everyMs` until `stop`, keeping every process's latest time: a process that
 * ends before `stop` (pgbench's connections end with it) keeps what it had at the last reading
 * before its end, losing at most `everyMs` of its time instead of all of it.
 * @example const t = trackPgCpu(read, 100); await work(); const spent = pgCpuSince(before, t.stop());
 */
export function trackPgCpu(read: () => PgCpuSample, everyMs: number): { stop: () => PgCpuSample } {
  const own = new Map<number, number>();
  const background = new Map<number, number>();
  const take = () => {
    const s = read();
    for (const [pid, micros] of s.own) own.set(pid, micros);
    for (const [pid, micros] of s.background) background.set(pid, micros);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return { own, background };
    },
  };
}
