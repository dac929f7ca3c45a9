/**
 * `@partner-yield/source-evm/file-price-table`: a `PriceTable` read from a JSON file that a feed
 * (a cron job, a sidecar) rewrites. The file is read again when its modification time changes;
 * a file that is missing or invalid makes lookups fail with 503 (StoreUnavailableError) rather
 * than serve the rows it held before. Node only (node:fs).
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { StoreUnavailableError } from "@partner-yield/core";
import { MemoryPriceTable, type PriceRow, type PriceTable, parsePriceTable } from "./price-table.js";

/**
 * @example
 * const table = new FilePriceTable("/etc/partner-yield/prices.json");
 * const prices = new TablePriceSource(table, { maxAgeSeconds: 3600 });
 */
export class FilePriceTable implements PriceTable {
  readonly path: string;
  #loaded: { mtimeMs: number; size: number; table: MemoryPriceTable } | undefined;

  constructor(path: string) {
    this.path = path;
  }

  async getPrice(chainId: number, assetAddress: string): Promise<PriceRow | undefined> {
    return (await this.#current()).getPrice(chainId, assetAddress);
  }

  /** Reads and validates the file now. @throws StoreUnavailableError naming the problem. */
  async load(): Promise<void> {
    await this.#current();
  }

  async #current(): Promise<MemoryPriceTable> {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(this.path);
    } catch (error) {
      this.#loaded = undefined;
      throw new StoreUnavailableError(`price table ${this.path}: ${(error as Error).message}`, 30, {
        cause: error,
      });
    }
    const loaded = this.#loaded;
    if (loaded !== undefined && loaded.mtimeMs === info.mtimeMs && loaded.size === info.size)
      return loaded.table;
    try {
      const table = new MemoryPriceTable(parsePriceTable(JSON.parse(await readFile(this.path, "utf8"))));
      this.#loaded = { mtimeMs: info.mtimeMs, size: info.size, table };
      return table;
    } catch (error) {
      this.#loaded = undefined;
      throw new StoreUnavailableError(`price table ${this.path}: ${(error as Error).message}`, 30, {
        cause: error,
      });
    }
  }
}
