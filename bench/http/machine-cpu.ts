/**
 * The whole machine's CPU time, from the first line of /proc/stat: what every process on it spent
 * (our server, PostgreSQL, Redis, the load generator, the kernel), so a run's cost can be set
 * against the cores there are. Linux only; elsewhere the reader is undefined.
 * @module
 */
import { readFileSync } from "node:fs";
import { clockTicks } from "./pg-cpu.js";

/** CPU time of all cores at one moment, µs. */
export interface MachineCpuSample {
  /** user, nice, system, irq, softirq and steal: time the cores were not idle. */
  readonly busy: number;
  /** busy plus idle and iowait. */
  readonly all: number;
  /**
   * Of busy, steal: time the hypervisor gave this virtual machine's cores to someone else. Not this
   * machine's work, but its cores were not free for it either (a run with much of it is a noisy one).
   */
  readonly steal: number;
}

/**
 * A reader of /proc/stat's `cpu` line; undefined where it cannot be read or parsed.
 * @example const read = machineCpuReader(); const before = read?.(); … const spent = machineCpuSince(before, read());
 */
export function machineCpuReader(): (() => MachineCpuSample) | undefined {
  const microsPerTick = 1_000_000 / clockTicks();
  const read = (): MachineCpuSample =>
    machineCpuOf(readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "", microsPerTick);
  try {
    read();
    return read;
  } catch {
    return undefined;
  }
}

/**
 * A sample from /proc/stat's first line, `cpu  user nice system idle iowait irq softirq steal guest
 * guest_nice` in ticks (guest time is in user); throws on any other line.
 * @example machineCpuOf("cpu  10 0 5 80 5 0 2 3 0 0", 10_000); // { busy: 200000, all: 1050000, steal: 30000 }
 */
export function machineCpuOf(line: string, microsPerTick: number): MachineCpuSample {
  const [label, ...fields] = line.trim().split(/\s+/);
  const t = fields.slice(0, 8).map(Number);
  if (label !== "cpu" || t.length < 8 || t.some((x) => !Number.isFinite(x))) {
    throw new Error(`unexpected /proc/stat line: ${line}`);
  }
  // Busy: every field but idle (3) and iowait (4).
  const waiting = t[3]! + t[4]!;
  const busy = t.reduce((sum, x) => sum + x, 0) - waiting;
  return {
    busy: busy * microsPerTick,
    all: (busy + waiting) * microsPerTick,
    steal: t[7]! * microsPerTick,
  };
}

/**
 * Busy µs between two samples, the share of the cores' time they were busy (0-1), and the share
 * stolen by the hypervisor (0-1, part of the busy share).
 */
export function machineCpuSince(
  before: MachineCpuSample,
  after: MachineCpuSample,
): { busy: number; share: number; stolen: number } {
  const busy = after.busy - before.busy;
  const all = after.all - before.all;
  const steal = after.steal - before.steal;
  return { busy, share: all > 0 ? busy / all : Number.NaN, stolen: all > 0 ? steal / all : Number.NaN };
}
