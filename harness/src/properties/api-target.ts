/**
 * The deployment as the API properties see it: quotes and positions fetched through the
 * throttled client, each (product, amount) asked once and remembered, within a request budget
 * whose shrinking reserve is kept apart, so one property's shrinking never starves the next
 * property's runs.
 * @module
 */
import type { ListedProduct } from "../checks/context.js";
import { bodyOf, isRecord, isRefusal, positionPath, yieldPath } from "../checks/context.js";
import type { Exchange, HttpClient } from "../http/client.js";

/** A quote as the API answered it: the raw data and the exchange that shows it. */
export interface QuoteAnswer {
  readonly exchange: Exchange;
  readonly data: Record<string, unknown>;
}

/** A refused or broken answer: no figures to judge. */
export interface QuoteRefusal {
  readonly exchange: Exchange;
  readonly refused: string;
}

/** Thrown when a request would spend more than the budget allows. */
export class BudgetSpent extends Error {
  override readonly name = "BudgetSpent";
}

export class ApiTarget {
  readonly #client: HttpClient;
  readonly #apiKey: string;
  readonly #quotes = new Map<string, Promise<QuoteAnswer | QuoteRefusal>>();
  /** Requests left for shrinking, over all properties. */
  #reserve: number;
  /** No request beyond this many, whatever the phase. */
  readonly #limit: number;
  /** While true, new requests come out of the shrinking reserve. */
  shrinking = false;
  /** Set when a shrink was cut short by the reserve. */
  shrinkCut = false;
  /** Set when a request was refused because the whole budget was spent. */
  budgetHit = false;

  constructor(client: HttpClient, apiKey: string, limit: number, shrinkReserve: number) {
    this.#client = client;
    this.#apiKey = apiKey;
    this.#limit = limit;
    this.#reserve = shrinkReserve;
  }

  /** Requests sent so far. */
  get spent(): number {
    return this.#client.spent;
  }

  /** The quote of `amount` (canonical text) in `product`, asked once. */
  quote(product: ListedProduct, amount: string): Promise<QuoteAnswer | QuoteRefusal> {
    const key = `${product.slug} ${amount}`;
    const known = this.#quotes.get(key);
    if (known !== undefined) return known;
    this.#spend();
    const pending = this.#get(yieldPath(product.slug, amount));
    this.#quotes.set(key, pending);
    return pending;
  }

  /** A position (never cached: each is asked once by construction). */
  position(product: ListedProduct, wallet: string): Promise<QuoteAnswer | QuoteRefusal> {
    this.#spend();
    return this.#get(positionPath(product.slug, wallet));
  }

  /** Takes one request from the budget (and from the shrinking reserve while shrinking), or throws. */
  #spend(): void {
    if (this.#client.spent >= this.#limit) {
      this.budgetHit = true;
      if (this.shrinking) this.shrinkCut = true;
      throw new BudgetSpent("the request budget is spent");
    }
    if (this.shrinking) {
      if (this.#reserve <= 0) {
        this.shrinkCut = true;
        throw new BudgetSpent("the request budget for shrinking is spent");
      }
      this.#reserve--;
    }
  }

  async #get(path: string): Promise<QuoteAnswer | QuoteRefusal> {
    const exchange = await this.#client.send("PROPERTIES", {
      method: "GET",
      path,
      headers: { "X-Api-Key": this.#apiKey },
    });
    const status = exchange.response?.status;
    if (status === undefined) return { exchange, refused: `no response: ${exchange.error ?? "unknown"}` };
    const body = bodyOf(exchange);
    const data = isRecord(body) ? body["data"] : undefined;
    if (status !== 200 || isRefusal(exchange) || !isRecord(data))
      return { exchange, refused: `HTTP ${status}: ${(exchange.response?.text ?? "").slice(0, 160)}` };
    return { exchange, data };
  }
}
