/**
 * Reads one EVM chain over JSON-RPC with viem: a timeout per request, retries with exponential
 * backoff for transient failures, every contract read pinned to one block by its hash, and a
 * short cache keyed by that block. Any failure that survives the retries is a
 * `StoreUnavailableError` (503 with Retry-After), never a stale value.
 * @module
 */
import { createPublicClient, type Hex, http, type PublicClient } from "viem";
import { BlockCache } from "./block-cache.js";
import { isTransientRpcError, unavailable } from "./rpc-errors.js";

/** Where one chain is read. */
export interface EvmChainConfig {
  /** The chain id the node must report (checked before any product on it is served). */
  readonly chainId: number;
  /** Name for messages, e.g. "base"; default `chain <id>`. */
  readonly name?: string | undefined;
  /** HTTP(S) JSON-RPC endpoint. It may carry a provider key: it is never logged. */
  readonly rpcUrl: string;
  /** Blocks between the two share-price readings of the underlying APY; default about a day. */
  readonly apyWindowBlocks?: number | undefined;
}

/** How reads behave; every field has a default. */
export interface RpcReadOptions {
  /** Per JSON-RPC request; default 4000 ms. */
  readonly timeoutMs?: number | undefined;
  /** Retries of a transient failure (timeout, connection, 5xx, 429); default 2. */
  readonly retries?: number | undefined;
  /** First backoff; doubled at each retry, plus up to as much random jitter; default 100 ms. */
  readonly retryBaseDelayMs?: number | undefined;
  /** How long the latest block is reused before asking the node again; default 1000 ms. */
  readonly latestBlockMaxAgeMs?: number | undefined;
  /** Reads kept per chain (LRU); default 10000. */
  readonly cacheEntries?: number | undefined;
  /** Retry-After (seconds) of the 503 when the node cannot be read; default 5. */
  readonly retryAfterSeconds?: number | undefined;
  /** Clock in milliseconds; default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

export const DEFAULT_RPC_READ_OPTIONS = Object.freeze({
  timeoutMs: 4000,
  retries: 2,
  retryBaseDelayMs: 100,
  latestBlockMaxAgeMs: 1000,
  cacheEntries: 10_000,
  retryAfterSeconds: 5,
});

/**
 * Blocks in about a day at each registry chain's nominal block time (CONTRACT §8 chain ids).
 * The APY uses the two blocks' real timestamps, so a drifting block time changes the length of
 * the window, not the correctness of the rate.
 */
export const DEFAULT_APY_WINDOW_BLOCKS: Readonly<Record<number, number>> = Object.freeze({
  1: 7_200, // ethereum, 12 s
  10: 43_200, // optimism, 2 s
  56: 115_200, // bsc, 0.75 s
  137: 43_200, // polygon, 2 s
  8453: 43_200, // base, 2 s
  42161: 345_600, // arbitrum, 0.25 s
  43114: 43_200, // avalanche C-chain, about 2 s
});
const FALLBACK_APY_WINDOW_BLOCKS = 7_200;

/** A block the reads are pinned to. */
export interface BlockRef {
  readonly number: bigint;
  readonly hash: Hex;
  /** Seconds since the Unix epoch. */
  readonly timestamp: bigint;
}

/** Blocks this deep are final for caching purposes (a reorg that deep is not expected). */
const SETTLED_DEPTH = 64n;

/**
 * One chain's reader.
 * @example
 * const reader = new ChainReader({ chainId: 8453, name: "base", rpcUrl: "http://127.0.0.1:8545" });
 * const block = await reader.latestBlock();
 * const total = await reader.read(block, `totalAssets:${vault}`, "totalAssets", (client, at) =>
 *   client.readContract({ address: vault, abi: erc4626Abi, functionName: "totalAssets", blockHash: at.hash }));
 */
export class ChainReader {
  readonly chainId: number;
  readonly name: string;
  readonly apyWindowBlocks: number;
  readonly client: PublicClient;
  readonly #options: { -readonly [K in keyof typeof DEFAULT_RPC_READ_OPTIONS]: number };
  readonly #now: () => number;
  readonly #cache: BlockCache;
  #latest: { at: number; block: Promise<BlockRef> } | undefined;

  constructor(config: EvmChainConfig, options: RpcReadOptions = {}) {
    if (!Number.isSafeInteger(config.chainId) || config.chainId <= 0)
      throw new RangeError(`chain id must be a positive integer, got ${String(config.chainId)}`);
    const url = new URL(config.rpcUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new RangeError(`RPC URL of chain ${config.chainId} must be http(s), got ${url.protocol}`);
    this.chainId = config.chainId;
    this.name = config.name ?? `chain ${config.chainId}`;
    this.apyWindowBlocks =
      config.apyWindowBlocks ?? DEFAULT_APY_WINDOW_BLOCKS[config.chainId] ?? FALLBACK_APY_WINDOW_BLOCKS;
    if (!Number.isSafeInteger(this.apyWindowBlocks) || this.apyWindowBlocks < 1)
      throw new RangeError(`APY window of ${this.name} must be a positive number of blocks`);
    this.#options = {
      timeoutMs: options.timeoutMs ?? DEFAULT_RPC_READ_OPTIONS.timeoutMs,
      retries: options.retries ?? DEFAULT_RPC_READ_OPTIONS.retries,
      retryBaseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RPC_READ_OPTIONS.retryBaseDelayMs,
      latestBlockMaxAgeMs: options.latestBlockMaxAgeMs ?? DEFAULT_RPC_READ_OPTIONS.latestBlockMaxAgeMs,
      cacheEntries: options.cacheEntries ?? DEFAULT_RPC_READ_OPTIONS.cacheEntries,
      retryAfterSeconds: options.retryAfterSeconds ?? DEFAULT_RPC_READ_OPTIONS.retryAfterSeconds,
    };
    this.#now = options.now ?? Date.now;
    this.#cache = new BlockCache(this.#options.cacheEntries);
    // viem's own retries are off: ours are bounded and classify errors (viem would also honour a
    // provider's Retry-After of a minute inside one API request).
    this.client = createPublicClient({
      transport: http(config.rpcUrl, { timeout: this.#options.timeoutMs, retryCount: 0 }),
    });
  }

  /** The chain id the node reports. */
  nodeChainId(): Promise<number> {
    return this.#withRetries("eth_chainId", () => this.client.getChainId());
  }

  /** The latest block, reused for `latestBlockMaxAgeMs`; a failed lookup is never reused. */
  latestBlock(): Promise<BlockRef> {
    const now = this.#now();
    const cached = this.#latest;
    if (cached !== undefined && now - cached.at < this.#options.latestBlockMaxAgeMs) return cached.block;
    const block = this.#withRetries("latest block", async () =>
      toBlockRef(await this.client.getBlock({ blockTag: "latest" })),
    );
    const entry = { at: now, block };
    this.#latest = entry;
    block.catch(() => {
      if (this.#latest === entry) this.#latest = undefined;
    });
    return block;
  }

  /** The block `number` as seen from `head`; cached once it is settled (64 blocks deep). */
  blockByNumber(number: bigint, head: BlockRef): Promise<BlockRef> {
    const load = () =>
      this.#withRetries(`block ${number}`, async () =>
        toBlockRef(await this.client.getBlock({ blockNumber: number })),
      );
    return head.number - number >= SETTLED_DEPTH
      ? this.#cache.get(`block:${number}`, load)
      : this.#cache.get(`block:${number}@${head.hash}`, load);
  }

  /**
   * A read pinned to `block` (pass `block.hash` as the call's `blockHash`), cached under
   * `block.hash` + `key`.
   */
  read<T>(
    block: BlockRef,
    key: string,
    what: string,
    call: (client: PublicClient, block: BlockRef) => Promise<T>,
  ): Promise<T> {
    return this.#cache.get(`${block.hash}:${key}`, () =>
      this.#withRetries(what, () => call(this.client, block)),
    );
  }

  async #withRetries<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    const { retries, retryBaseDelayMs, retryAfterSeconds } = this.#options;
    for (let i = 0; ; i++) {
      try {
        return await attempt();
      } catch (error) {
        if (i >= retries || !isTransientRpcError(error))
          throw unavailable(`${this.name} RPC (${what})`, error, retryAfterSeconds);
        const backoff = retryBaseDelayMs * 2 ** i;
        await delay(backoff + Math.floor(Math.random() * backoff));
      }
    }
  }
}

function toBlockRef(block: { number: bigint | null; hash: Hex | null; timestamp: bigint }): BlockRef {
  if (block.number === null || block.hash === null) throw new Error("the node returned a pending block");
  return { number: block.number, hash: block.hash, timestamp: block.timestamp };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
