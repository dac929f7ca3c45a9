/**
 * A small LRU of promises. State at a given block hash never changes, so a read pinned to a block
 * can be reused as long as it is in memory; concurrent identical reads share one RPC call. A
 * failed read is forgotten at once, so a failure is never served from the cache.
 * @module
 */
export class BlockCache {
  readonly #entries = new Map<string, Promise<unknown>>();

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new RangeError(`cache size must be a positive integer, got ${String(maxEntries)}`);
  }

  /**
   * The cached promise for `key`, or the one `load` starts.
   * @example const total = await cache.get(`${block.hash}:totalAssets`, () => readTotalAssets(block));
   */
  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit !== undefined) {
      // Most recently used goes last: Map keeps insertion order.
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit as Promise<T>;
    }
    const loading = load();
    this.#entries.set(key, loading);
    loading.catch(() => {
      if (this.#entries.get(key) === loading) this.#entries.delete(key);
    });
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return loading;
  }

  get size(): number {
    return this.#entries.size;
  }
}
