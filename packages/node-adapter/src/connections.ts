/**
 * Connection limits for a node:http server: a cap on open connections, a cap per client address,
 * and a shorter idle time while the server is crowded, so idle keep-alive connections (a flood of
 * `GET /healthz` then silence) cannot use up the process's file descriptors and lock out the
 * clients that send requests. Also remembers each connection's address as it was when accepted
 * (after a reset, `socket.remoteAddress` is undefined). An address counts by its bucket (the core's
 * `addressBucket`: an IPv6 address by its /64, `ipv6PrefixLength`), so one IPv6 customer cannot
 * open `maxConnectionsPerAddress` connections from each of its 2^64 addresses.
 * @module
 */
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { addressBucket } from "@partner-yield/core/adapters";

export interface ConnectionLimits {
  /**
   * Most connections open at once. A new connection beyond it closes the connection that has been
   * idle (no request in progress) the longest; when none is idle, the new one is closed at once.
   * Default: `defaultMaxConnections()` (three quarters of the open-files limit).
   */
  readonly maxConnections?: number | undefined;
  /** Most connections open at once from one client address; beyond it a new one is closed at once. Default 256. */
  readonly maxConnectionsPerAddress?: number | undefined;
  /**
   * Leading bits of an IPv6 address that count as one client address (here and in the
   * failed-authentication limit, through `addressOf`), 1 to 128. Default 64.
   */
  readonly ipv6PrefixLength?: number | undefined;
  /**
   * While the server is crowded (at least three quarters of `maxConnections` open), a connection
   * idle this long is closed (instead of after the keep-alive timeout). Default 5000.
   */
  readonly crowdedIdleTimeoutMs?: number | undefined;
}

/** The state of the connections of one server. */
export interface ConnectionGuard {
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
  /** Connections open now. */
  readonly open: number;
  /** True while at least three quarters of `maxConnections` are open. */
  readonly crowded: boolean;
  /** Connections closed at once when accepted, over a cap (since start). */
  readonly refused: number;
  /** Idle connections closed to make room, or idle too long while crowded (since start). */
  readonly evicted: number;
  /**
   * The client address of a connection as it was when accepted, as its bucket (`addressBucket`:
   * an IPv4 address, or an IPv6 address's prefix such as `2001:db8:1:2::/64`).
   */
  addressOf(socket: Duplex): string | undefined;
  /** A request arrived on `socket` (the connection is not idle until it is done). */
  requestStarted(socket: Duplex): void;
  /** A request on `socket` is done. */
  requestEnded(socket: Duplex): void;
  /** Stops the guard's timer (the server closing). */
  stop(): void;
}

export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
export const DEFAULT_CROWDED_IDLE_TIMEOUT_MS = 5000;
/** Share of `maxConnections` from which the server counts as crowded. */
const CROWDED_SHARE = 0.75;
/** Assumed open-files limit where it cannot be read (the usual soft default). */
const FALLBACK_FD_LIMIT = 1024;

/**
 * Three quarters of the process's open-files limit (the soft `ulimit -n`, read from
 * /proc/self/limits; 1024 where it cannot be read), at least 64: the remaining quarter stays for
 * the stores' connections, log files, and connections accepted only to be closed.
 * @example defaultMaxConnections(); // 15000 with `ulimit -n 20000`
 */
export function defaultMaxConnections(): number {
  return Math.max(64, Math.floor(openFilesLimit() * 0.75));
}

/** This process's soft open-files limit (`ulimit -n`, from /proc/self/limits), or 1024 where it cannot be read. */
export function openFilesLimit(): number {
  try {
    const limits = readFileSync("/proc/self/limits", "utf8");
    const line = limits.split("\n").find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    if (soft !== undefined && /^[0-9]+$/.test(soft)) return Number(soft);
  } catch {
    // Not Linux: the usual default.
  }
  return FALLBACK_FD_LIMIT;
}

interface Tracked {
  readonly address: string | undefined;
  /** Requests in progress on this connection (pipelined requests count one each). */
  busy: number;
  /** When the connection last became idle (or was accepted), `performance.now()`. */
  idleSince: number;
}

/**
 * Watches `server`'s connections and enforces `limits` (see `ConnectionLimits`). The listener
 * reports requests through `requestStarted` / `requestEnded` (give the guard to `createListener`).
 *
 * @example
 * const guard = guardConnections(server, { maxConnections: 10_000 });
 * const listener = createListener(api, { connections: guard });
 */
export function guardConnections(server: Server, limits: ConnectionLimits = {}): ConnectionGuard {
  const max = limits.maxConnections ?? defaultMaxConnections();
  const perAddress = limits.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS;
  const crowdedIdleMs = limits.crowdedIdleTimeoutMs ?? DEFAULT_CROWDED_IDLE_TIMEOUT_MS;
  const bucketOptions = { ipv6PrefixLength: limits.ipv6PrefixLength };
  addressBucket("::", bucketOptions); // RangeError now, not at the first connection
  for (const [name, value] of Object.entries({ max, perAddress, crowdedIdleMs })) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  }
  const crowdedAt = Math.max(1, Math.floor(max * CROWDED_SHARE));
  const tracked = new Map<Duplex, Tracked>();
  /** Idle connections, longest idle first (a Map keeps insertion order). */
  const idle = new Map<Duplex, Tracked>();
  const perAddressOpen = new Map<string, number>();
  let refused = 0;
  let evicted = 0;
  let sweeper: NodeJS.Timeout | undefined;

  const crowded = () => tracked.size >= crowdedAt;

  function evict(socket: Duplex): void {
    evicted++;
    idle.delete(socket);
    socket.destroy();
  }

  /** While crowded, every second: close the connections idle longer than `crowdedIdleMs`. */
  function sweep(): void {
    if (!crowded()) {
      clearInterval(sweeper);
      sweeper = undefined;
      return;
    }
    const cutoff = performance.now() - crowdedIdleMs;
    for (const [socket, t] of idle) {
      if (t.idleSince > cutoff) break;
      evict(socket);
    }
  }

  function onConnection(socket: Socket): void {
    const remote = socket.remoteAddress;
    if (remote === undefined && resetBeforeAccept(socket)) {
      // Its requests could be counted against no address (CONTRACT §9); nobody reads an answer.
      refused++;
      socket.destroy();
      return;
    }
    const address = remote === undefined ? undefined : addressBucket(remote, bucketOptions);
    const fromAddress = address === undefined ? 0 : (perAddressOpen.get(address) ?? 0);
    if (fromAddress >= perAddress) {
      refused++;
      socket.destroy();
      return;
    }
    if (tracked.size >= max) {
      const oldest = idle.keys().next();
      if (oldest.done === true) {
        refused++;
        socket.destroy();
        return;
      }
      evict(oldest.value);
    }
    const t: Tracked = { address, busy: 0, idleSince: performance.now() };
    tracked.set(socket, t);
    idle.set(socket, t);
    if (address !== undefined) perAddressOpen.set(address, fromAddress + 1);
    socket.once("close", () => {
      tracked.delete(socket);
      idle.delete(socket);
      if (address !== undefined) {
        const left = (perAddressOpen.get(address) ?? 1) - 1;
        if (left === 0) perAddressOpen.delete(address);
        else perAddressOpen.set(address, left);
      }
    });
    if (sweeper === undefined && crowded()) {
      sweeper = setInterval(sweep, Math.min(1000, crowdedIdleMs));
      sweeper.unref();
    }
  }
  // First, so a connection over a cap is closed before anything else sees it.
  server.prependListener("connection", onConnection);

  return {
    maxConnections: max,
    maxConnectionsPerAddress: perAddress,
    get open() {
      return tracked.size;
    },
    get crowded() {
      return crowded();
    },
    get refused() {
      return refused;
    },
    get evicted() {
      return evicted;
    },
    addressOf: (socket) => tracked.get(socket)?.address,
    requestStarted(socket) {
      const t = tracked.get(socket);
      if (t === undefined) return;
      t.busy++;
      idle.delete(socket);
    },
    requestEnded(socket) {
      const t = tracked.get(socket);
      if (t === undefined || t.busy === 0) return;
      if (--t.busy > 0) return;
      t.idleSince = performance.now();
      idle.set(socket, t);
    },
    stop() {
      clearInterval(sweeper);
      sweeper = undefined;
      server.off("connection", onConnection);
    },
  };
}

/**
 * Whether a TCP connection was reset before it was accepted: the kernel then reports no peer
 * (`remoteAddress` undefined) though the socket has a local address. A connection over a Unix
 * socket has neither, and is not one.
 * @example if (socket.remoteAddress === undefined && resetBeforeAccept(socket)) socket.destroy();
 */
export function resetBeforeAccept(socket: Socket): boolean {
  return socket.remoteAddress === undefined && socket.localAddress !== undefined;
}
