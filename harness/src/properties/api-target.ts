/**
 * The deployment as the API properties see it: quotes and positions fetched through the
 * throttled client, each (product, amount) and each (product, wallet) asked once and remembered.
 * Each property has a budget of its own (its runs, and a share of the shrinking reserve), so one
 * property's shrinking never starves the next property's runs; a cut is recorded and reported.
 * @module
 */
import type { ListedProduct } from "../checks/context.js";
import { bodyOf, isRecord, positionPath, yieldPath } from "../checks/context.js";
import type { Exchange, HttpClient } from "../http/client.js";

/** A quote or a position as the API answered it: the raw data and the exchange that shows it. */
export interface QuoteAnswer {
  readonly exchange: Exchange;
  readonly data: Record<string, unknown>;
}

/** A refusal (4xx) of an input: no figures to judge, the case is discarded. */
export interface QuoteRefusal {
  readonly exchange: Exchange;
  readonly refused: string;
  readonly status: number;
}

/**
 * A broken answer to a valid input: a 5xx, no answer (a reset, a timeout), or a 200 that is not
 * a JSON `{ data }` envelope. A property fails on it; it is never a discard.
 */
export interface BrokenAnswer {
  readonly exchange: Exchange;
  readonly broken: string;
}

export type Answer = QuoteAnswer | QuoteRefusal | BrokenAnswer;

/** Thrown when a request would spend more than the property's budget allows. */
export class BudgetSpent extends Error {
  override readonly name = "BudgetSpent";
}

/** What one property may spend: requests for its runs, and for shrinking a counterexample. */
export interface PropertyBudget {
  readonly runs: number;
  readonly shrink: number;
}

export class ApiTarget {
  readonly #client: HttpClient;
  readonly #apiKey: string;
  readonly #answers = new Map<string, Promise<Answer>>();
  /** No request beyond this many, whatever the phase. */
  readonly #limit: number;
  #runsLeft = Number.POSITIVE_INFINITY;
  #shrinkLeft = 0;
  /** While true, new requests come out of the property's shrinking budget. */
  shrinking = false;
  /** Set when a shrink was cut short by the budget. */
  shrinkCut = false;
  /** Set when a run's request was refused because the property's budget was spent. */
  budgetHit = false;

  constructor(client: HttpClient, apiKey: string, limit: number) {
    this.#client = client;
    this.#apiKey = apiKey;
    this.#limit = limit;
  }

  /** Requests sent so far. */
  get spent(): number {
    return this.#client.spent;
  }

  /** Starts a property: its own budget, its flags cleared. */
  begin(budget: PropertyBudget): void {
    this.#runsLeft = budget.runs;
    this.#shrinkLeft = budget.shrink;
    this.shrinking = false;
    this.shrinkCut = false;
    this.budgetHit = false;
  }

  /** The quote of `amount` (canonical text) in `product`, asked once. */
  quote(product: ListedProduct, amount: string): Promise<Answer> {
    return this.#once(`quote ${product.slug} ${amount}`, yieldPath(product.slug, amount));
  }

  /** The position of `wallet` in `product`, asked once. */
  position(product: ListedProduct, wallet: string): Promise<Answer> {
    return this.#once(`position ${product.slug} ${wallet.toLowerCase()}`, positionPath(product.slug, wallet));
  }

  #once(key: string, path: string): Promise<Answer> {
    const known = this.#answers.get(key);
    if (known !== undefined) return known;
    this.#spend();
    const pending = this.#get(path);
    this.#answers.set(key, pending);
    return pending;
  }

  /** Takes one request from the property's budget (runs or shrinking), or throws BudgetSpent. */
  #spend(): void {
    if (this.#client.spent >= this.#limit) {
      if (this.shrinking) this.shrinkCut = true;
      else this.budgetHit = true;
      throw new BudgetSpent("the request budget (--max-requests) is spent");
    }
    if (this.shrinking) {
      if (this.#shrinkLeft <= 0) {
        this.shrinkCut = true;
        throw new BudgetSpent("the property's budget for shrinking is spent");
      }
      this.#shrinkLeft--;
      return;
    }
    if (this.#runsLeft <= 0) {
      this.budgetHit = true;
      throw new BudgetSpent("the property's budget for its runs is spent");
    }
    this.#runsLeft--;
  }

  async #get(path: string): Promise<Answer> {
    const exchange = await this.#client.send("PROPERTIES", {
      method: "GET",
      path,
      headers: { "X-Api-Key": this.#apiKey },
    });
    return classifyAnswer(exchange);
  }
}

/** Sorts an exchange into an answer, a refusal (4xx) or a broken answer (5xx, none, unreadable). */
export function classifyAnswer(exchange: Exchange): Answer {
  const status = exchange.response?.status;
  if (status === undefined)
    return { exchange, broken: `no answer (${exchange.error ?? "the connection ended without a response"})` };
  const text = exchange.response?.text ?? "";
  if (status >= 500) return { exchange, broken: `HTTP ${status}: ${text.slice(0, 160)}` };
  if (status >= 400) return { exchange, refused: `HTTP ${status}: ${text.slice(0, 160)}`, status };
  const body = bodyOf(exchange);
  const data = isRecord(body) ? body["data"] : undefined;
  if (status !== 200 || !isRecord(body) || body["success"] !== true || !isRecord(data))
    return {
      exchange,
      broken: `HTTP ${status} with a body that is not the {"success":true,"data":{…}} envelope: ${JSON.stringify(text.slice(0, 160))}`,
    };
  return { exchange, data };
}
