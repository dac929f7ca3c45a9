/**
 * Plans a conformance run (which checks, how many requests at most), learns the target's
 * products, runs the checks one after another and collects their results.
 * @module
 */
import {
  CheckContext,
  CheckFailure,
  type CheckInputs,
  CheckSkipped,
  type Discovery,
  isRecord,
  type ListedProduct,
  PRODUCTS_PATH,
  problemCode,
} from "./checks/context.js";
import { CHECKS } from "./checks/registry.js";
import {
  type CheckDefinition,
  type CheckResult,
  costOf,
  type Evidence,
  type Level,
  type Need,
  type PlanOptions,
} from "./checks/types.js";
import { ConfigError } from "./config.js";
import type { ReferenceFixtures } from "./fixtures.js";
import { HttpClient } from "./http/client.js";
import { Redactor } from "./redact.js";
import { TokenBucket } from "./throttle.js";
import { VERSION } from "./version.js";

/** Everything a run needs, resolved: the target, its credentials and the knobs. */
export interface RunSettings {
  readonly baseUrl: string;
  readonly embedded: boolean;
  readonly apiKey: string;
  readonly signingSecret: string | undefined;
  readonly otherEnvApiKey: string | undefined;
  readonly foreignSlug: string | undefined;
  readonly wallet: string | undefined;
  /** The deployment's fixture data (POS-09); the embedded server's own by default. */
  readonly fixtures?: ReferenceFixtures | undefined;
  /** A revoked key of the same partner and environment (AUTH-06). */
  readonly revokedApiKey?: string | undefined;
  /** Where the API key came from, for the message when the target refuses it. */
  readonly apiKeySource?: string;
  /** Exit 1 when a selected check was skipped (CI jobs that must not go green on a missing secret). */
  readonly failOnSkip?: boolean;
  readonly level: Level;
  readonly seed: number;
  readonly rpm: number;
  readonly burst: number;
  readonly maxRequests: number | undefined;
  readonly only: readonly string[] | undefined;
  readonly rateLimitProbe: boolean;
  readonly plan: PlanOptions;
  readonly timeoutMs: number;
  /** Placeholders for secrets in reports, e.g. `$PARTNER_API_KEY`. */
  readonly secretNames?: {
    readonly apiKey?: string;
    readonly signingSecret?: string;
    readonly otherEnvApiKey?: string;
    readonly revokedApiKey?: string;
  };
}

export interface PlannedCheck {
  readonly check: CheckDefinition;
  /** Requests it may spend; 0 when it will be skipped. */
  readonly cost: number;
  /** Set when an input it needs is absent: it is reported as skipped without running. */
  readonly skipReason: string | undefined;
}

export interface Plan {
  readonly checks: readonly PlannedCheck[];
  /** Upper bound on requests, discovery included. */
  readonly requests: number;
  /** Requests meant to fail authentication (CONTRACT §4: the target limits them per client). */
  readonly failedAuth: number;
  /** Checks of level `reference` left out at level `spec`. */
  readonly excludedByLevel: number;
}

export interface RunReport {
  readonly tool: "partner-yield-conformance";
  readonly version: string;
  readonly baseUrl: string;
  readonly embedded: boolean;
  readonly level: Level;
  readonly seed: number;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly plannedRequests: number;
  /** Requests actually sent, retries included. */
  readonly requests: number;
  readonly throttle: { readonly rpm: number; readonly burst: number; readonly waitedMs: number };
  readonly results: readonly CheckResult[];
  readonly summary: { passed: number; failed: number; skipped: number; warnings: number };
  /** 0 every check that ran passed, 1 a check failed (or, with `failOnSkip`, was skipped). */
  readonly exitCode: 0 | 1;
}

export interface RunHooks {
  onPlan?(plan: Plan, settings: RunSettings): void;
  onCheckStart?(check: CheckDefinition, index: number, total: number): void;
  onResult?(result: CheckResult, index: number, total: number): void;
  onSend?(spent: number): void;
  onBackoff?(ms: number): void;
}

/** Failing-auth requests a plan may hold: the target allows 30 a minute per client (CONTRACT §4). */
export const FAILED_AUTH_BUDGET = 15;

const NEED_TEXT: Readonly<Record<Need, string>> = {
  signingSecret: "needs the signing secret (PARTNER_SIGNING_SECRET or --signing-secret)",
  otherEnvKey: "needs a key of the other environment (PARTNER_OTHER_ENV_API_KEY or --other-env-api-key)",
  foreignSlug: "needs a product slug of another partner (--foreign-slug)",
  wallet: "needs a wallet that holds a position (--wallet)",
  rateLimitProbe: "opt-in: pass --rate-limit-probe to drive the quota to a 429",
  fixtures: "needs the deployment's fixture data (--fixtures DIR) to recompute positions",
  revokedKey:
    "needs a revoked key of this partner and environment (PARTNER_REVOKED_API_KEY or --revoked-api-key)",
};

function hasNeed(settings: RunSettings, need: Need): boolean {
  switch (need) {
    case "signingSecret":
      return settings.signingSecret !== undefined;
    case "otherEnvKey":
      return settings.otherEnvApiKey !== undefined;
    case "foreignSlug":
      return settings.foreignSlug !== undefined;
    case "wallet":
      return settings.wallet !== undefined;
    case "rateLimitProbe":
      return settings.rateLimitProbe;
    case "fixtures":
      return settings.fixtures !== undefined;
    case "revokedKey":
      return settings.revokedApiKey !== undefined;
  }
}

/** True when `id` is selected by `--only` items (exact IDs or prefixes such as `EVT`). */
export function selectedBy(only: readonly string[] | undefined, id: string): boolean {
  if (only === undefined) return true;
  return only.some((item) => item === id || (!item.includes("-") && id.startsWith(`${item}-`)));
}

/** The checks of a run and what they may cost. Throws ConfigError for an impossible plan. */
export function planRun(settings: RunSettings, checks: readonly CheckDefinition[] = CHECKS): Plan {
  if (settings.only !== undefined) {
    const unknown = settings.only.filter((item) => !checks.some((c) => selectedBy([item], c.id)));
    if (unknown.length > 0) {
      throw new ConfigError(
        `--only: no check matches ${unknown.join(", ")} (see \`partner-yield-conformance list\`)`,
      );
    }
  }
  const atLevel = checks.filter((c) => settings.level === "reference" || c.level === "spec");
  const selected = atLevel.filter((c) => selectedBy(settings.only, c.id));
  if (selected.length === 0) {
    throw new ConfigError(`--only selects no check of level ${settings.level}`);
  }
  let requests = 1; // discovery
  let failedAuth = 0;
  const planned = selected.map((check): PlannedCheck => {
    const missing = (check.needs ?? []).find((need) => !hasNeed(settings, need));
    if (missing !== undefined) return { check, cost: 0, skipReason: NEED_TEXT[missing] };
    const cost = costOf(check, settings.plan);
    requests += cost;
    failedAuth += check.failedAuth ?? 0;
    return { check, cost, skipReason: undefined };
  });
  const plan: Plan = {
    checks: planned,
    requests,
    failedAuth,
    excludedByLevel: checks.length - atLevel.length,
  };
  if (settings.maxRequests !== undefined && requests > settings.maxRequests) {
    throw new ConfigError(
      `the plan may send up to ${requests} requests, more than --max-requests ${settings.maxRequests}; ` +
        `narrow it with --only, lower --yield-samples/--product-sample${
          planned.some((p) => p.check.needs?.includes("rateLimitProbe") && p.skipReason === undefined)
            ? ", lower --probe-budget (the rate-limit probe may spend it all)"
            : ""
        }, or raise --max-requests`,
    );
  }
  if (failedAuth > FAILED_AUTH_BUDGET) {
    throw new ConfigError(
      `the plan holds ${failedAuth} requests meant to fail authentication; the target blocks a client ` +
        `after 30 a minute (CONTRACT §4), so keep it under ${FAILED_AUTH_BUDGET}`,
    );
  }
  return plan;
}

/** Runs a plan against a target. Throws ConfigError when the target is unreachable or refuses the key. */
export async function runConformance(settings: RunSettings, hooks: RunHooks = {}): Promise<RunReport> {
  const plan = planRun(settings);
  hooks.onPlan?.(plan, settings);
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const redactor = redactorFor(settings);
  const bucket = new TokenBucket({ perMinute: settings.rpm, burst: settings.burst });
  const client = new HttpClient({
    baseUrl: settings.baseUrl,
    bucket,
    timeoutMs: settings.timeoutMs,
    ...(hooks.onSend ? { onSend: hooks.onSend } : {}),
    ...(hooks.onBackoff ? { onBackoff: hooks.onBackoff } : {}),
  });
  const results: CheckResult[] = [];
  try {
    const discovery = await discover(client, settings);
    const inputs: CheckInputs = {
      level: settings.level,
      seed: settings.seed,
      apiKey: settings.apiKey,
      signingSecret: settings.signingSecret,
      otherEnvApiKey: settings.otherEnvApiKey,
      foreignSlug: settings.foreignSlug,
      wallet: settings.wallet,
      fixtures: settings.fixtures,
      revokedApiKey: settings.revokedApiKey,
      environment: environmentOf(settings.apiKey),
      plan: settings.plan,
      runTag: runTag(settings.seed),
    };
    const total = plan.checks.length;
    for (const [index, planned] of plan.checks.entries()) {
      hooks.onCheckStart?.(planned.check, index, total);
      const result =
        planned.skipReason !== undefined
          ? skippedResult(planned.check, planned.skipReason)
          : await runCheck(planned.check, inputs, discovery, client, redactor, settings.signingSecret);
      results.push(result);
      hooks.onResult?.(result, index, total);
    }
  } finally {
    await client.close();
  }
  const summary = {
    passed: results.filter((r) => r.status === "passed").length,
    failed: results.filter((r) => r.status === "failed").length,
    skipped: results.filter((r) => r.status === "skipped").length,
    warnings: results.reduce((n, r) => n + r.warnings.length, 0),
  };
  return {
    tool: "partner-yield-conformance",
    version: VERSION,
    baseUrl: settings.baseUrl,
    embedded: settings.embedded,
    level: settings.level,
    seed: settings.seed,
    startedAt,
    durationMs: Math.round(performance.now() - started),
    plannedRequests: plan.requests,
    requests: client.spent,
    throttle: { rpm: settings.rpm, burst: settings.burst, waitedMs: Math.round(bucket.waitedMs) },
    results,
    summary,
    exitCode: summary.failed > 0 || (settings.failOnSkip === true && summary.skipped > 0) ? 1 : 0,
  };
}

export function redactorFor(settings: RunSettings): Redactor {
  const names = settings.secretNames ?? {};
  const secrets = [
    { value: settings.apiKey, placeholder: names.apiKey ?? "$PARTNER_API_KEY" },
    { value: settings.signingSecret ?? "", placeholder: names.signingSecret ?? "$PARTNER_SIGNING_SECRET" },
    {
      value: settings.otherEnvApiKey ?? "",
      placeholder: names.otherEnvApiKey ?? "$PARTNER_OTHER_ENV_API_KEY",
    },
    {
      value: settings.revokedApiKey ?? "",
      placeholder: names.revokedApiKey ?? "$PARTNER_REVOKED_API_KEY",
    },
  ];
  return new Redactor(secrets);
}

async function runCheck(
  check: CheckDefinition,
  inputs: CheckInputs,
  discovery: Discovery,
  client: HttpClient,
  redactor: Redactor,
  signingSecret: string | undefined,
): Promise<CheckResult> {
  const t = new CheckContext(check.id, inputs, discovery, client);
  const started = performance.now();
  let status: CheckResult["status"] = "passed";
  let message: string | undefined;
  let evidence: Evidence[] = [];
  try {
    await check.run(t);
  } catch (error) {
    if (error instanceof CheckSkipped) {
      status = "skipped";
      message = error.message;
    } else if (error instanceof CheckFailure) {
      status = "failed";
      message = error.message;
      evidence = error.exchanges.map((e) => CheckContext.evidence(e, redactor, signingSecret));
    } else {
      status = "failed";
      message = `the check stopped on an unexpected error: ${error instanceof Error ? error.message : String(error)}`;
      evidence = t.exchanges.slice(-1).map((e) => CheckContext.evidence(e, redactor, signingSecret));
    }
  }
  return {
    id: check.id,
    title: check.title,
    category: check.category,
    level: check.level,
    source: check.source,
    status,
    message: message === undefined ? undefined : redactor.redact(message),
    warnings: t.warnings.map((w) => redactor.redact(w)),
    evidence,
    requests: t.exchanges.reduce((n, e) => n + e.attempts, 0),
    durationMs: Math.round(performance.now() - started),
  };
}

function skippedResult(check: CheckDefinition, reason: string): CheckResult {
  return {
    id: check.id,
    title: check.title,
    category: check.category,
    level: check.level,
    source: check.source,
    status: "skipped",
    message: reason,
    warnings: [],
    evidence: [],
    requests: 0,
    durationMs: 0,
  };
}

/** GET the product list once: checks choose their products from it (never hard-coded slugs). */
async function discover(client: HttpClient, settings: RunSettings): Promise<Discovery> {
  const exchange = await client.send("DISCOVERY", {
    method: "GET",
    path: PRODUCTS_PATH,
    headers: { "X-Api-Key": settings.apiKey },
  });
  if (exchange.response === undefined) {
    throw new ConfigError(
      `the target ${settings.baseUrl} is unreachable: ${exchange.error ?? "no response"}`,
    );
  }
  const { status, text } = exchange.response;
  if (status === 401 || status === 403) {
    const code = problemCode(exchange);
    throw new ConfigError(
      `the target refused the API key (HTTP ${status}${code ? " " + code : ""}): check ${settings.apiKeySource ?? "PARTNER_API_KEY"} ` +
        "and that the key belongs to this environment",
    );
  }
  if (status === 404) {
    throw new ConfigError(
      `GET ${exchange.request.url} answered 404${problemCode(exchange) ? ` ${problemCode(exchange)}` : ""}: ` +
        "the base URL must be the server root, without /api/partner or another path",
    );
  }
  if (status !== 200)
    return { exchange, products: undefined, reason: `GET ${PRODUCTS_PATH} answered ${status}` };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { exchange, products: undefined, reason: `GET ${PRODUCTS_PATH} did not answer JSON` };
  }
  const data = isRecord(body) ? body["data"] : undefined;
  if (!Array.isArray(data))
    return { exchange, products: undefined, reason: `GET ${PRODUCTS_PATH} has no data array` };
  const products = data.filter(isRecord).flatMap((raw): ListedProduct[] => {
    if (typeof raw["slug"] !== "string") return [];
    const metrics = raw["latest_metrics"];
    return [
      {
        slug: raw["slug"],
        status: typeof raw["status"] === "string" ? raw["status"] : undefined,
        assetDecimals: integerOrUndefined(raw["asset_decimals"]),
        assetSymbol: typeof raw["asset_symbol"] === "string" ? raw["asset_symbol"] : undefined,
        serviceFeeBps: integerOrUndefined(raw["service_fee_bps"]),
        partnerFeeBps: integerOrUndefined(raw["partner_fee_bps"]),
        metrics: metrics === null ? null : isRecord(metrics) ? metrics : undefined,
        raw,
      },
    ];
  });
  return { exchange, products, reason: undefined };
}

function integerOrUndefined(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) ? value : undefined;
}

function environmentOf(key: string): "sandbox" | "production" | undefined {
  if (key.startsWith("ypk_test_")) return "sandbox";
  if (key.startsWith("ypk_live_")) return "production";
  return undefined;
}

/** Idempotency keys carry the seed and a random part, so a rerun with the same seed never collides. */
function runTag(seed: number): string {
  const random = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36);
  return `${seed.toString(36)}-${random}`;
}
