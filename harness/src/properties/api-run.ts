/**
 * `partner-yield-conformance properties --base-url URL`: the properties of CONTRACT §2 that the
 * API can show, run against a deployment's answers with generated amounts, within a request
 * budget and the same throttle as the conformance runner (by default it fits a sandbox's 100
 * requests a minute). A failure is shrunk to a small amount while the budget lasts, and printed
 * with its seed, its replay path and the curl commands that reproduce it.
 * @module
 */
import fc from "fast-check";
import { CheckContext, type ListedProduct } from "../checks/context.js";
import { ConfigError } from "../config.js";
import { discover } from "../discovery.js";
import { type Exchange, HttpClient } from "../http/client.js";
import { fromBaseUnits, toBaseUnits } from "../oracle/decimal.js";
import type { Redactor } from "../redact.js";
import { type Clock, TokenBucket } from "../throttle.js";
import { VERSION } from "../version.js";
import {
  API_PROPERTIES,
  type ApiPropertyDefinition,
  expectedNet,
  quoteCases,
  quoterFor,
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
  /** A wallet that holds a position (P-17 reads it besides a random one). */
  readonly wallet?: string | undefined;
  /** Products whose positions P-17 reads, at most. */
  readonly productSample: number;
  readonly maxRequests: number;
  readonly rpm: number;
  readonly burst: number;
  readonly timeoutMs: number;
  /** The command that starts `properties` as the user started it (for the replay line). */
  readonly command: string;
  readonly redactor: Redactor;
  readonly clock?: Clock;
}

export interface ApiPropertyResult {
  readonly id: string;
  readonly title: string;
  readonly statement: string;
  readonly status: "passed" | "failed";
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
  readonly results: readonly ApiPropertyResult[];
  readonly passed: number;
  readonly failed: number;
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
  const client = new HttpClient({ baseUrl: options.baseUrl, bucket, timeoutMs: options.timeoutMs });
  const target = new ApiTarget(client, options.apiKey, options.maxRequests, options.maxRequests - planned);
  const results: ApiPropertyResult[] = [];
  print(
    `Auditors' property suite through the API of ${options.baseUrl}: the invariants of CONTRACT §2 as the deployment answers them`,
  );
  print(
    `seed ${options.seed} · ${options.path === undefined ? `${options.runs} runs per property` : `replaying path ${options.path}`} · ` +
      `at most ${options.maxRequests} requests (${planned} for the runs, the rest for shrinking) · throttle ${options.rpm}/min, burst ${options.burst}`,
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
      else if (definition.over === "positions")
        result = await positionsProperty(definition, products, target, options);
      else result = await quoteProperty(definition, quotable, target, options);
      const counted: ApiPropertyResult = { ...result, requests: target.spent - before };
      results.push(counted);
      printResult(counted, definition, options, print);
    }
  } finally {
    await client.close();
  }
  const failed = results.filter((r) => r.status === "failed").length;
  print("");
  print(
    `${results.length - failed} passed, ${failed} failed · ${client.spent} requests · seed ${options.seed}`,
  );
  return {
    tool: "partner-yield-conformance properties",
    version: VERSION,
    baseUrl: options.baseUrl,
    seed: options.seed,
    runsPerProperty: options.runs,
    requests: client.spent,
    results,
    passed: results.length - failed,
    failed,
  };
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
): Promise<Outcome> {
  const [random] = fc.sample(fc.uint8Array({ minLength: 20, maxLength: 20 }), {
    seed: options.seed,
    numRuns: 1,
  });
  const wallets = [`0x${[...random!].map((b) => b.toString(16).padStart(2, "0")).join("")}`];
  if (options.wallet !== undefined) wallets.push(options.wallet);
  let runs = 0;
  let discarded = 0;
  for (const product of products.slice(0, options.productSample)) {
    const d = product.assetDecimals;
    const total = (product.metrics as Record<string, unknown> | null | undefined)?.["wrapper_total_assets"];
    for (const wallet of wallets) {
      let answer: Awaited<ReturnType<ApiTarget["position"]>>;
      try {
        answer = await target.position(product, wallet);
      } catch (error) {
        if (error instanceof BudgetSpent) break;
        throw error;
      }
      if ("refused" in answer || d === undefined) {
        discarded++;
        continue;
      }
      runs++;
      const fail = (error: string): Outcome => ({
        ...base(definition),
        status: "failed",
        runs,
        discarded,
        counterexample: `${product.slug}, ${wallet}`,
        error,
        reproduce: evidenceOf([answer.exchange], options),
      });
      const { shares, assets, usd_value: usd } = answer.data;
      if (shares === "0" && assets !== "0") return fail(`no shares, yet assets ${JSON.stringify(assets)}`);
      if (assets === "0" && usd !== "0") return fail(`no assets, yet usd_value ${JSON.stringify(usd)}`);
      if (typeof total === "string" && typeof assets === "string") {
        let held: bigint;
        let vault: bigint;
        try {
          held = toBaseUnits(assets, d);
          vault = toBaseUnits(total, d);
        } catch {
          return fail(
            `assets ${JSON.stringify(assets)} or wrapper_total_assets ${JSON.stringify(total)} is not a decimal at ${d} digits`,
          );
        }
        if (held > vault)
          return fail(
            `assets ${fromBaseUnits(held, d)} exceed the vault's wrapper_total_assets ${fromBaseUnits(vault, d)}`,
          );
      }
    }
  }
  if (runs === 0)
    return {
      ...base(definition),
      status: "failed",
      runs,
      discarded,
      error: "ran 0 inputs: no position was answered",
    };
  return { ...base(definition), status: "passed", runs, discarded };
}

async function quoteProperty(
  definition: ApiPropertyDefinition,
  quotable: readonly ListedProduct[],
  target: ApiTarget,
  options: ApiPropertyOptions,
): Promise<Outcome> {
  if (quotable.length === 0)
    return {
      ...base(definition),
      status: "failed",
      runs: 0,
      discarded: 0,
      error: "ran 0 inputs: the target lists no active product with metrics",
    };
  const quote = quoterFor(target);
  target.shrinking = false;
  target.shrinkCut = false;
  target.budgetHit = false;
  const property = fc.asyncProperty(quoteCases(quotable), async (c) => {
    try {
      await definition.holds!(c, quote);
    } catch (error) {
      if (error instanceof BudgetSpent) {
        // While shrinking, the last failure stands; before, the case cannot be judged.
        if (target.shrinking) return;
        fc.pre(false);
      }
      if (error instanceof Violation) target.shrinking = true;
      throw error;
    }
  });
  const details = await fc.check(property, {
    numRuns: options.runs,
    seed: options.seed,
    // A discarded case may have cost requests: give up early rather than spend the budget on them.
    maxSkipsPerRun: 2,
    ...(options.path === undefined ? {} : { path: options.path }),
  });
  target.shrinking = false;
  const outcome = {
    ...base(definition),
    runs: details.numRuns,
    discarded: details.numSkips,
    ...(target.budgetHit ? { budgetHit: true } : {}),
  };
  // Too many discarded cases: fast-check gives up, and there is no counterexample to show.
  const gaveUp = details.failed && details.counterexample === null;
  if (!details.failed || gaveUp) {
    if (details.numRuns > 0 && !gaveUp) return { ...outcome, status: "passed" };
    const error =
      options.path === undefined
        ? `ran ${details.numRuns} inputs, ${details.numSkips} cases discarded (amounts the deployment refused${target.budgetHit ? ", then the request budget ran out" : ""}): ${details.numRuns === 0 ? "nothing was tested" : "too few runs to judge"}`
        : `ran 0 inputs: the path "${options.path}" leads to no case of ${definition.id} with seed ${options.seed}`;
    return { ...outcome, status: "failed", error };
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
          replay: `${options.command} --base-url ${options.baseUrl} --only ${definition.id} --seed ${details.seed} --path "${path}"`,
        }),
    reproduce: error instanceof Violation ? evidenceOf(error.exchanges, options) : [],
    shrinkCut: target.shrinkCut,
  };
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
    (result.budgetHit ? ", the request budget ran out" : "");
  if (result.status === "passed") {
    print(
      `✔ ${result.id}  ${result.title}  (${result.runs} ${unit}${discarded}, ${result.requests} new requests)`,
    );
    print(`         ${result.statement}`);
    return;
  }
  print(
    `✖ ${result.id}  ${result.title}  (failed after ${result.runs} ${unit}${discarded}, ${result.requests} new requests)`,
  );
  print(`         ${result.statement}`);
  if (result.counterexample !== undefined) print(`    counterexample: ${result.counterexample}`);
  print(`    error: ${options.redactor.redact(result.error ?? "")}`);
  if (result.shrinkCut)
    print("    (shrinking stopped: the request budget ran out; --max-requests allows more)");
  if (result.seed !== undefined) print(`    seed ${result.seed}, path "${result.path ?? ""}"`);
  if (result.replay !== undefined) print(`    replay: ${result.replay}`);
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
