/**
 * `partner-yield-conformance properties --base-url URL`: the properties of CONTRACT §2 that the
 * API can show, run against a deployment's answers with generated amounts, within a request
 * budget and the same throttle as the conformance runner (by default it fits a sandbox's 100
 * requests a minute). A 5xx, a reset, a timeout or an unreadable answer on a valid input fails the
 * property; a property that could not run enough inputs (or every class of input, `--min-runs`)
 * is `inconclusive`, never passed. Each property has its own budget; a failure is shrunk while it
 * lasts, and printed with its seed, its replay path and the curl commands that reproduce it. The
 * report carries a coverage record per property and every position read with its audit view, so
 * that an auditor can recompute each one from the report alone.
 * @module
 */
import fc from "fast-check";
import { CheckContext, type ListedProduct } from "../checks/context.js";
import { ConfigError } from "../config.js";
import { discover } from "../discovery.js";
import { type Exchange, HttpClient } from "../http/client.js";
import { fromBaseUnits } from "../oracle/decimal.js";
import type { Redactor } from "../redact.js";
import { type Clock, TokenBucket } from "../throttle.js";
import { VERSION } from "../version.js";
import {
  AMOUNT_CLASSES,
  API_PROPERTIES,
  type ApiPropertyDefinition,
  amountClass,
  classCases,
  coveringOrder,
  expectedNet,
  judgeable,
  type PositionRead,
  productClasses,
  type QuoteCase,
  quoteCases,
  quoterFor,
  readPosition,
  Violation,
} from "./api-properties.js";
import { ApiTarget, BudgetSpent } from "./api-target.js";

/** Requests one generated case may need: P₁, P₂, P₁ + P₂, and an amount written two ways. */
export const REQUESTS_PER_CASE = 5;

export interface ApiPropertyOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiKeySource: string;
  readonly runs: number;
  readonly seed: number;
  readonly path?: string | undefined;
  readonly only?: readonly string[] | undefined;
  /** A wallet that holds a position (the position properties read it besides a random one). */
  readonly wallet?: string | undefined;
  /** Products whose positions the position properties read, at most. */
  readonly productSample: number;
  /** Inputs every class of input must get, at least (`--min-runs`, default 1). */
  readonly minRuns?: number | undefined;
  /** The API's own base path (`--base-path`; the replay line has it from `command`). */
  readonly apiBasePath?: string | undefined;
  readonly maxRequests: number;
  readonly rpm: number;
  readonly burst: number;
  readonly timeoutMs: number;
  /** The command that starts `properties` as the user started it (for the replay line). */
  readonly command: string;
  readonly redactor: Redactor;
  readonly clock?: Clock;
}

/** Inputs tried, by class: how many of each, and the classes expected but short of `--min-runs`. */
export interface Coverage {
  readonly products: Readonly<Record<string, number>>;
  readonly amounts?: Readonly<Record<string, number>>;
  readonly wallets?: Readonly<Record<string, number>>;
  /** Expected classes that got fewer than `--min-runs` inputs. */
  readonly missing: readonly string[];
}

/** A position as read in the run, with what recomputing it needs (docs/math.md, Positions). */
export interface PositionRecord {
  readonly product_slug: string;
  readonly status: string | undefined;
  readonly asset_decimals: number | undefined;
  readonly wallet_address: string;
  /** The answer's data as served (shares, assets, usd_value, and the audit view `vault` if any). */
  readonly answer: Readonly<Record<string, unknown>> | null;
  /** Why it has no figures: a refusal or a broken answer. */
  readonly error?: string;
  readonly curl: string;
}

export interface ApiPropertyResult {
  readonly id: string;
  readonly title: string;
  readonly statement: string;
  /** `inconclusive`: too few inputs ran (refusals, budget, a class never exercised): never a pass. */
  readonly status: "passed" | "failed" | "inconclusive";
  readonly coverage?: Coverage;
  /** Requests this property may spend: its runs and its share of shrinking. */
  readonly budget?: { readonly runs: number; readonly shrink: number };
  readonly runs: number;
  /** Cases discarded: an amount the deployment refused, or no digit to spare (P-14 at 0 decimals). */
  readonly discarded: number;
  /** Requests this property added (the rest were already asked by another). */
  readonly requests: number;
  readonly counterexample?: string;
  readonly error?: string;
  readonly seed?: number;
  readonly path?: string;
  readonly replay?: string;
  readonly reproduce?: readonly string[];
  /** Set when shrinking stopped because the budget was spent: the counterexample may not be minimal. */
  readonly shrinkCut?: boolean;
  /** Set when the request budget ran out before every run: fewer runs than asked. */
  readonly budgetHit?: boolean;
}

export interface ApiPropertyReport {
  readonly tool: "partner-yield-conformance properties";
  readonly version: string;
  readonly baseUrl: string;
  readonly seed: number;
  readonly runsPerProperty: number;
  readonly requests: number;
  readonly minRuns: number;
  readonly results: readonly ApiPropertyResult[];
  readonly positions: readonly PositionRecord[];
  readonly passed: number;
  readonly failed: number;
  readonly inconclusive: number;
}

/** The properties `--only` selects (IDs or the prefix P). Throws ConfigError for an unknown one. */
export function selectApiProperties(only: readonly string[] | undefined): readonly ApiPropertyDefinition[] {
  if (only === undefined) return API_PROPERTIES;
  const unknown = only.filter((o) => o !== "P" && !API_PROPERTIES.some((p) => p.id === o));
  if (unknown.length > 0)
    throw new ConfigError(
      `--only: ${unknown.join(", ")} cannot be checked through the API; with --base-url the properties are ${API_PROPERTIES.map((p) => p.id).join(", ")}`,
    );
  return API_PROPERTIES.filter((p) => only.includes("P") || only.includes(p.id));
}

/** Upper bound on the requests of the runs (discovery, positions, every case), before shrinking. */
export function plannedRequests(
  options: Pick<ApiPropertyOptions, "runs" | "productSample" | "wallet">,
  selected: readonly ApiPropertyDefinition[],
): number {
  const quotes = selected.some((p) => p.over === "quote") ? options.runs * REQUESTS_PER_CASE : 0;
  // Positions are asked once and shared by every position property.
  const positions = selected.some((p) => p.over === "positions")
    ? options.productSample * (options.wallet === undefined ? 1 : 2)
    : 0;
  return 1 + quotes + positions;
}

/** Runs the API properties. Throws ConfigError for a plan over budget or a refused key. */
export async function runApiProperties(
  options: ApiPropertyOptions,
  print: (line: string) => void = () => {},
): Promise<ApiPropertyReport> {
  const selected = selectApiProperties(options.only);
  const planned = plannedRequests(options, selected);
  if (planned > options.maxRequests)
    throw new ConfigError(
      `${options.runs} runs may need ${planned} requests, more than --max-requests ${options.maxRequests}; lower --runs (each run needs up to ${REQUESTS_PER_CASE}) or raise --max-requests`,
    );
  const bucket = new TokenBucket({
    perMinute: options.rpm,
    burst: options.burst,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const client = new HttpClient({
    baseUrl: options.baseUrl,
    bucket,
    timeoutMs: options.timeoutMs,
    ...(options.apiBasePath === undefined ? {} : { apiBasePath: options.apiBasePath }),
  });
  const target = new ApiTarget(client, options.apiKey, options.maxRequests);
  const quoteProperties = selected.filter((p) => p.over === "quote").length;
  const shrinkShare =
    quoteProperties === 0 ? 0 : Math.floor((options.maxRequests - planned) / quoteProperties);
  const minRuns = options.minRuns ?? 1;
  const results: ApiPropertyResult[] = [];
  const positions = new Map<string, PositionRecord>();
  print(
    `Auditors' property suite through the API of ${options.baseUrl}: the invariants of CONTRACT §2 as the deployment answers them`,
  );
  print(
    `seed ${options.seed} · ${options.path === undefined ? `${options.runs} runs per property` : `replaying path ${options.path}`} · ` +
      `every class of input at least ${minRuns}× (--min-runs) · ` +
      `at most ${options.maxRequests} requests (${planned} for the runs, ${shrinkShare} per property for shrinking) · throttle ${options.rpm}/min, burst ${options.burst}`,
  );
  print("");
  try {
    const discovery = await discover(client, options);
    const products = discovery.products ?? [];
    const quotable = products.filter(
      (p) =>
        p.status === "active" &&
        p.assetDecimals !== undefined &&
        typeof p.metrics === "object" &&
        p.metrics !== null,
    );
    for (const definition of selected) {
      const before = target.spent;
      let result: Outcome;
      if (definition.over === "products")
        result = productsProperty(definition, products, discovery.exchange, options);
      else if (definition.over === "positions") {
        const budget = { runs: positionRequests(options), shrink: 0 };
        target.begin(budget);
        result = {
          ...(await positionsProperty(definition, products, target, options, minRuns, positions)),
          budget,
        };
      } else {
        const budget = { runs: options.runs * (definition.cost ?? REQUESTS_PER_CASE), shrink: shrinkShare };
        target.begin(budget);
        result = { ...(await quoteProperty(definition, quotable, target, options, minRuns)), budget };
      }
      const counted: ApiPropertyResult = { ...result, requests: target.spent - before };
      results.push(counted);
      printResult(counted, definition, options, print);
    }
  } finally {
    await client.close();
  }
  const failed = results.filter((r) => r.status === "failed").length;
  const inconclusive = results.filter((r) => r.status === "inconclusive").length;
  const positionList = [...positions.values()];
  if (positionList.length > 0) printPositions(positionList, print);
  print("");
  print(
    `${results.length - failed - inconclusive} passed, ${failed} failed, ${inconclusive} inconclusive · ${client.spent} requests · seed ${options.seed}`,
  );
  return {
    tool: "partner-yield-conformance properties",
    version: VERSION,
    baseUrl: options.baseUrl,
    seed: options.seed,
    runsPerProperty: options.runs,
    minRuns,
    requests: client.spent,
    results,
    positions: positionList,
    passed: results.length - failed - inconclusive,
    failed,
    inconclusive,
  };
}

/** Position requests of a run: each product of the sample, for each wallet read. */
function positionRequests(options: Pick<ApiPropertyOptions, "productSample" | "wallet">): number {
  return options.productSample * (options.wallet === undefined ? 1 : 2);
}

/** Counts one input of each of `classes` into `tally`. */
function count(tally: Record<string, number>, ...classes: string[]): void {
  for (const c of classes) tally[c] = (tally[c] ?? 0) + 1;
}

/** The expected classes of `tally`'s dimension that got fewer than `minRuns` inputs. */
function short(tally: Record<string, number>, expected: readonly string[], minRuns: number): string[] {
  return expected.filter((c) => (tally[c] ?? 0) < minRuns).map((c) => `${c} (${tally[c] ?? 0})`);
}

/** A result before the runner counts its requests. */
type Outcome = Omit<ApiPropertyResult, "requests">;

function base(definition: ApiPropertyDefinition): Pick<ApiPropertyResult, "id" | "title" | "statement"> {
  return { id: definition.id, title: definition.title, statement: definition.statement };
}

/** The curl command of each distinct request among `exchanges`. */
function evidenceOf(exchanges: readonly Exchange[], options: ApiPropertyOptions): string[] {
  const curls = exchanges.map((e) => CheckContext.evidence(e, options.redactor, undefined).curl);
  return [...new Set(curls)];
}

function productsProperty(
  definition: ApiPropertyDefinition,
  products: readonly ListedProduct[],
  listExchange: Exchange,
  options: ApiPropertyOptions,
): Outcome {
  let runs = 0;
  for (const product of products) {
    const expected = expectedNet(product);
    if (expected === undefined) continue;
    runs++;
    const got = (product.metrics as Record<string, unknown>)["net_apy_for_user"];
    if (got !== expected)
      return {
        ...base(definition),
        status: "failed",
        runs,
        discarded: 0,
        counterexample: product.slug,
        error: `${product.slug}: net_apy_for_user ${JSON.stringify(got)}; the formula gives ${expected}`,
        reproduce: evidenceOf([listExchange], options),
      };
  }
  if (runs === 0)
    return {
      ...base(definition),
      status: "failed",
      runs,
      discarded: 0,
      error: "ran 0 inputs: no listed product has metrics and fees",
    };
  return { ...base(definition), status: "passed", runs, discarded: 0 };
}

async function positionsProperty(
  definition: ApiPropertyDefinition,
  products: readonly ListedProduct[],
  target: ApiTarget,
  options: ApiPropertyOptions,
  minRuns: number,
  records: Map<string, PositionRecord>,
): Promise<Outcome> {
  const [random] = fc.sample(fc.uint8Array({ minLength: 20, maxLength: 20 }), {
    seed: options.seed,
    numRuns: 1,
  });
  const wallets = [`0x${[...random!].map((b) => b.toString(16).padStart(2, "0")).join("")}`];
  if (options.wallet !== undefined) wallets.push(options.wallet);
  const sample = coveringOrder(products).slice(0, options.productSample);
  const tally: Record<string, number> = {};
  const walletTally: Record<string, number> = {};
  let runs = 0;
  let discarded = 0;
  let noView = 0;
  const outcome = (): Pick<ApiPropertyResult, "runs" | "discarded" | "budgetHit"> => ({
    runs,
    discarded,
    ...(target.budgetHit ? { budgetHit: true } : {}),
  });
  for (const product of sample) {
    for (const wallet of wallets) {
      let answer: Awaited<ReturnType<ApiTarget["position"]>>;
      try {
        answer = await target.position(product, wallet);
      } catch (error) {
        if (error instanceof BudgetSpent) break;
        throw error;
      }
      const curl = evidenceOf([answer.exchange], options)[0] ?? "";
      const read = readPosition(product, wallet, answer);
      records.set(`${product.slug} ${wallet.toLowerCase()}`, {
        product_slug: product.slug,
        status: product.status,
        asset_decimals: product.assetDecimals,
        wallet_address: wallet,
        answer: "data" in answer ? answer.data : null,
        ...("broken" in answer
          ? { error: answer.broken }
          : "refused" in answer
            ? { error: answer.refused }
            : {}),
        curl,
      });
      const fail = (error: string): Outcome => ({
        ...base(definition),
        status: "failed",
        ...outcome(),
        counterexample: `${product.slug}, ${wallet}`,
        error,
        reproduce: evidenceOf([answer.exchange], options),
        coverage: { products: tally, wallets: walletTally, missing: [] },
      });
      if ("failure" in read) return fail(read.failure);
      if ("refused" in read) {
        discarded++;
        continue;
      }
      const p: PositionRead = read.read;
      if (!judgeable(definition, p)) {
        noView++;
        discarded++;
        continue;
      }
      runs++;
      count(tally, ...productClasses(product).filter((c) => c !== "loss product"));
      count(walletTally, p.sharesText === "0" ? "wallet without holdings" : "wallet with holdings");
      const error = definition.judge!(p);
      if (error !== undefined) return fail(error);
    }
  }
  const expectedProducts = [...new Set(products.flatMap(productClasses).filter((c) => c !== "loss product"))];
  const missing = [
    ...short(tally, expectedProducts, minRuns),
    ...short(walletTally, ["wallet with holdings", "wallet without holdings"], minRuns),
  ];
  const coverage: Coverage = { products: tally, wallets: walletTally, missing };
  if (runs === 0 || missing.length > 0) {
    const why: string[] = [];
    if (noView > 0)
      why.push(
        definition.needs === "vault"
          ? `${noView} positions came without the audit view (data.vault), which ${definition.id} recomputes from`
          : `${noView} positions with assets came without the audit view's usd_price`,
      );
    if (missing.some((m) => m.startsWith("wallet with holdings")) && options.wallet === undefined)
      why.push("no wallet with holdings was read: pass --wallet ADDRESS");
    if (missing.some((m) => m.startsWith("status") || m.startsWith("decimals")))
      why.push(`raise --product-sample (${options.productSample}) to read every kind of product`);
    if (target.budgetHit) why.push("the property's request budget ran out");
    return {
      ...base(definition),
      status: "inconclusive",
      ...outcome(),
      coverage,
      error: `ran ${runs} inputs${missing.length > 0 ? `; never exercised ${minRuns}×: ${missing.join(", ")}` : ""}${why.length > 0 ? ` (${why.join("; ")})` : ""}`,
    };
  }
  return { ...base(definition), status: "passed", ...outcome(), coverage };
}

async function quoteProperty(
  definition: ApiPropertyDefinition,
  quotable: readonly ListedProduct[],
  target: ApiTarget,
  options: ApiPropertyOptions,
  minRuns: number,
): Promise<Outcome> {
  if (quotable.length === 0)
    return {
      ...base(definition),
      status: "inconclusive",
      runs: 0,
      discarded: 0,
      error: "ran 0 inputs: the target lists no active product with metrics",
    };
  const quote = quoterFor(target);
  const productTally: Record<string, number> = {};
  const amountTally: Record<string, number> = {};
  let violated = false;
  const property = fc.asyncProperty(quoteCases(quotable), async (c) => {
    try {
      const d = c.product.assetDecimals!;
      if (c.p1 === 0n) await zeroRefused(c, target);
      else await definition.holds!(c, quote);
      if (!violated) {
        count(productTally, ...productClasses(c.product));
        count(amountTally, amountClass(c.p1, d));
        if (definition.amounts === 2 && c.p1 !== 0n) count(amountTally, amountClass(c.p2, d));
      }
    } catch (error) {
      if (error instanceof BudgetSpent) {
        // While shrinking, the last failure stands; before, the case cannot be judged.
        if (target.shrinking) return;
        fc.pre(false);
      }
      if (error instanceof Violation) {
        violated = true;
        target.shrinking = true;
      }
      throw error;
    }
  });
  // Every class of input on purpose first (--min-runs rounds), then random cases.
  const examples = classCases(quotable, minRuns).map((c): [QuoteCase] => [c]);
  const numRuns = Math.max(options.runs, examples.length);
  const details = await fc.check(property, {
    numRuns,
    seed: options.seed,
    examples,
    // A discarded case may have cost requests: give up early rather than spend the budget on them.
    maxSkipsPerRun: 2,
    ...(options.path === undefined ? {} : { path: options.path }),
  });
  target.shrinking = false;
  const fractional = quotable.some((p) => (p.assetDecimals ?? 0) > 0);
  const expectedProducts = [...new Set(quotable.flatMap(productClasses))];
  const expectedAmounts = AMOUNT_CLASSES.filter((c) => c !== "max precision" || fractional);
  const missing =
    options.path === undefined
      ? [...short(productTally, expectedProducts, minRuns), ...short(amountTally, expectedAmounts, minRuns)]
      : [];
  const coverage: Coverage = { products: productTally, amounts: amountTally, missing };
  const outcome = {
    ...base(definition),
    runs: details.numRuns,
    discarded: details.numSkips,
    coverage,
    ...(target.budgetHit ? { budgetHit: true } : {}),
  };
  // Too many discarded cases: fast-check gives up, and there is no counterexample to show.
  const gaveUp = details.failed && details.counterexample === null;
  if (!details.failed || gaveUp) {
    const enough = details.numRuns >= numRuns && !gaveUp;
    if (enough && missing.length === 0) return { ...outcome, status: "passed" };
    if (options.path !== undefined && details.numRuns === 0)
      return {
        ...outcome,
        status: "inconclusive",
        error: `ran 0 inputs: the path "${options.path}" leads to no case of ${definition.id} with seed ${options.seed}`,
      };
    const parts = [
      `ran ${details.numRuns} of ${numRuns} inputs, ${details.numSkips} cases discarded (amounts the deployment refused${target.budgetHit ? `, then the property's budget of ${options.runs * (definition.cost ?? REQUESTS_PER_CASE)} requests ran out` : ""})`,
    ];
    if (details.numRuns === 0) parts.push("nothing was tested");
    else if (!enough) parts.push("too few runs to judge");
    if (missing.length > 0) parts.push(`never exercised ${minRuns}×: ${missing.join(", ")}`);
    return { ...outcome, status: "inconclusive", error: parts.join(": ") };
  }
  const error = details.errorInstance;
  const c = details.counterexample?.[0];
  const path = details.counterexamplePath ?? undefined;
  return {
    ...outcome,
    status: "failed",
    counterexample:
      c === undefined
        ? "(none)"
        : `${c.product.slug}, P₁ = ${fromBaseUnits(c.p1, c.product.assetDecimals!)}${definition.amounts === 2 ? `, P₂ = ${fromBaseUnits(c.p2, c.product.assetDecimals!)}` : ""}`,
    error: error instanceof Error ? error.message : String(error),
    seed: details.seed,
    ...(path === undefined
      ? {}
      : {
          path,
          replay: `${options.command} --base-url ${options.baseUrl} --only ${definition.id} --seed ${details.seed} --path "${path}"${options.minRuns === undefined || options.minRuns === 1 ? "" : ` --min-runs ${options.minRuns}`}`,
        }),
    reproduce: error instanceof Violation ? evidenceOf(error.exchanges, options) : [],
    shrinkCut: target.shrinkCut,
  };
}

/** The zero class: amount 0 is refused with a 400 (CONTRACT §3: greater than zero). */
async function zeroRefused(c: QuoteCase, target: ApiTarget): Promise<void> {
  const answer = await target.quote(c.product, "0");
  if ("broken" in answer) throw new Violation(`amount 0 got ${answer.broken}`, [answer.exchange]);
  if ("refused" in answer && answer.status === 400) return;
  throw new Violation(
    `amount 0 was answered ${"refused" in answer ? answer.refused : "HTTP 200 with figures"}; an amount must be greater than zero (400 invalid_amount)`,
    [answer.exchange],
  );
}

/** `class n, class n` of a tally. */
function tallyText(tally: Readonly<Record<string, number>>): string {
  return Object.entries(tally)
    .map(([c, n]) => `${c} ${n}`)
    .join(", ");
}

function printCoverage(coverage: Coverage | undefined, print: (line: string) => void): void {
  if (coverage === undefined) return;
  const parts = [
    `products: ${tallyText(coverage.products) || "none"}`,
    ...(coverage.amounts === undefined ? [] : [`amounts: ${tallyText(coverage.amounts) || "none"}`]),
    ...(coverage.wallets === undefined ? [] : [`wallets: ${tallyText(coverage.wallets) || "none"}`]),
  ];
  print(`    coverage: ${parts.join(" · ")}`);
}

function printResult(
  result: ApiPropertyResult,
  definition: ApiPropertyDefinition,
  options: ApiPropertyOptions,
  print: (line: string) => void,
): void {
  const unit = definition.over === "quote" ? (result.runs === 1 ? "run" : "runs") : definition.over;
  const discarded =
    (result.discarded > 0 ? `, ${result.discarded} discarded` : "") +
    (result.budgetHit ? ", the property's request budget ran out" : "");
  if (result.status === "passed") {
    print(
      `✔ ${result.id}  ${result.title}  (${result.runs} ${unit}${discarded}, ${result.requests} new requests)`,
    );
    print(`         ${result.statement}`);
    printCoverage(result.coverage, print);
    return;
  }
  if (result.status === "inconclusive") {
    print(
      `? ${result.id}  ${result.title}  (inconclusive after ${result.runs} ${unit}${discarded}, ${result.requests} new requests)`,
    );
    print(`         ${result.statement}`);
    print(`    inconclusive: ${options.redactor.redact(result.error ?? "")}`);
    printCoverage(result.coverage, print);
    return;
  }
  print(
    `✖ ${result.id}  ${result.title}  (failed after ${result.runs} ${unit}${discarded}, ${result.requests} new requests)`,
  );
  print(`         ${result.statement}`);
  if (result.counterexample !== undefined) print(`    counterexample: ${result.counterexample}`);
  print(`    error: ${options.redactor.redact(result.error ?? "")}`);
  if (result.shrinkCut)
    print(
      `    (shrinking stopped: the property's budget of ${result.budget?.shrink ?? 0} requests for shrinking ran out, the counterexample may not be minimal; --max-requests allows more)`,
    );
  if (result.seed !== undefined) print(`    seed ${result.seed}, path "${result.path ?? ""}"`);
  if (result.replay !== undefined) print(`    replay: ${result.replay}`);
  printCoverage(result.coverage, print);
  if (result.reproduce !== undefined && result.reproduce.length > 0) {
    print("    reproduce:");
    for (const curl of result.reproduce)
      print(
        curl
          .split("\n")
          .map((line) => `      ${line}`)
          .join("\n"),
      );
  }
}

/**
 * Every position read, with the figures that recompute it (docs/math.md, Positions): an auditor
 * needs nothing but these lines.
 */
function printPositions(positions: readonly PositionRecord[], print: (line: string) => void): void {
  print("");
  print(
    "Positions read (docs/math.md, Positions: in base units, assets = floor(shares × (total_assets + 1) / (total_supply + 10^δ)), shares at D + δ digits; usd_value = floor(assets × usd_price) to the cent):",
  );
  for (const p of positions) {
    const head = `  ${p.product_slug} (${p.status ?? "?"}, D = ${p.asset_decimals ?? "?"}) ${p.wallet_address}:`;
    if (p.answer === null) {
      print(`${head} ${p.error ?? "no answer"}`);
      continue;
    }
    const a = p.answer;
    const v = a["vault"] as Record<string, unknown> | undefined;
    const view =
      v === undefined
        ? "no audit view"
        : `δ = ${String(v["decimals_offset"])}, total_assets ${String(v["total_assets"])}, total_supply ${String(v["total_supply"])}${v["usd_price"] === undefined ? "" : `, usd_price ${String(v["usd_price"])}`}`;
    print(
      `${head} shares ${String(a["shares"])}, assets ${String(a["assets"])}, usd_value ${String(a["usd_value"])} · ${view}`,
    );
  }
}
