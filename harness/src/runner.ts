/**
 * Plans a conformance run (which checks, how many requests at most), learns the target's
 * products, checks the signing secret, then runs the checks: the response checks' own requests
 * first, the scenarios in registry order, every recorded response judged by the response checks
 * as it arrives, their verdicts reported at the end.
 * @module
 */
import {
  CheckContext,
  CheckFailure,
  type CheckInputs,
  CheckSkipped,
  CheckWarning,
  type Discovery,
} from "./checks/context.js";
import { type CheckDefinition, costOf, type ResponseCheck } from "./checks/definition.js";
import { ResponseJudge } from "./checks/judge.js";
import { CHECKS } from "./checks/registry.js";
import {
  type CheckResult,
  type FailureKind,
  type Level,
  type Need,
  type PlanOptions,
  sourceOf,
} from "./checks/types.js";
import { ConfigError } from "./config.js";
import { discover } from "./discovery.js";
import type { Exchange } from "./http/client.js";
import { HttpClient } from "./http/client.js";
import type { ReferenceFixtures } from "./oracle/fixtures.js";
import { PREFLIGHT_REQUESTS, preflightSigning } from "./preflight.js";
import { Redactor } from "./redact.js";
import { type Clock, systemClock, TokenBucket } from "./throttle.js";
import { VERSION } from "./version.js";

/** Everything a run needs, resolved: the target, its credentials and the knobs. */
export interface RunSettings {
  /** Where the API is mounted: a server root, or the mount path when it has one (`https://host/yield/v1`). */
  readonly baseUrl: string;
  /**
   * The API's own base path under `baseUrl` (`--base-path`); by default `/api/partner` under a server
   * root and `""` under a URL with a path (`defaultApiBasePath`).
   */
  readonly apiBasePath?: string;
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
  /** Where the signing secret came from, for the message when the target refuses it. */
  readonly signingSecretSource?: string;
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
  /** The run's tag in idempotency keys and event data; random by default (fixed for the docs). */
  readonly runTag?: string;
  /** The clock of durations and of the throttle; real time by default (virtual for the docs). */
  readonly clock?: Clock;
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
  /** Upper bound on requests, discovery and the signing preflight included. */
  readonly requests: number;
  /** Requests of the signing preflight (0 when no selected check signs an event). */
  readonly preflight: number;
  /** Requests meant to fail authentication (CONTRACT §4: the target limits them per client). */
  readonly failedAuth: number;
  /** Checks of level `reference` left out at level `spec`. */
  readonly excludedByLevel: number;
}

export interface RunSummary {
  readonly passed: number;
  readonly failed: number;
  /** Checks that ended with status `warning` (inconclusive, or a finding that is not a failure). */
  readonly warned: number;
  readonly skipped: number;
  /** Notes attached to checks that ran. */
  readonly notes: number;
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
  readonly summary: RunSummary;
  /** 0 every check that ran passed or warned, 1 a check failed (or, with `failOnSkip`, was skipped). */
  readonly exitCode: 0 | 1;
}

export interface RunHooks {
  onPlan?(plan: Plan, settings: RunSettings): void;
  onCheckStart?(check: CheckDefinition, index: number, total: number): void;
  onResult?(result: CheckResult, index: number, total: number): void;
  onSend?(spent: number): void;
  onBackoff?(ms: number): void;
  /** Told when the harness keeps a quiet stretch or waits for one (RL-02's phase). */
  onPause?(ms: number, why: string): void;
}

/** Failing-auth requests a plan may hold: the target allows 30 a minute per client (CONTRACT §4). */
export const FAILED_AUTH_BUDGET = 15;

/** Evidence shown for a response check, at most. */
const RESPONSE_EVIDENCE = 3;

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

/**
 * Most requests a full run of `checks` sends with `options` and every input given: discovery, the
 * signing preflight, each check's cost; the opt-in rate-limit probe apart.
 */
export function requestBound(
  checks: readonly CheckDefinition[],
  options: PlanOptions,
): { run: number; probe: number } {
  const optIn = checks.filter((c) => c.needs?.includes("rateLimitProbe"));
  const rest = checks.filter((c) => !optIn.includes(c));
  const preflight = rest.some((c) => c.needs?.includes("signingSecret")) ? PREFLIGHT_REQUESTS : 0;
  return {
    run: 1 + preflight + rest.reduce((n, c) => n + costOf(c, options), 0),
    probe: optIn.reduce((n, c) => n + costOf(c, options), 0),
  };
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
  const preflight = planned.some(
    (p) => p.skipReason === undefined && p.check.needs?.includes("signingSecret"),
  )
    ? PREFLIGHT_REQUESTS
    : 0;
  requests += preflight;
  const plan: Plan = {
    checks: planned,
    requests,
    preflight,
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

/**
 * RL-02 (the remaining count goes down) can only conclude when no counted request may leave the
 * rolling window between two of its requests: the window's oldest request must be a few seconds
 * from leaving. In a run longer than the window, a steady stream of requests always has one about
 * to leave. So RL-02 is its own phase: run last (before the opt-in quota probe), and when the run
 * is longer than the window the harness keeps a quiet stretch (no request) about a window before
 * it, then waits until that stretch is the window's oldest part.
 */
export const QUIET_CHECK = "RL-02";
/** The quiet stretch, long enough to absorb a late estimate of the checks after it. */
export const QUIET_MS = 8_000;
/** CONTRACT §7: limits are over any rolling 60 seconds. */
const WINDOW_MS = 60_000;
/** The quiet stretch is kept when about this much of the run is left (the wait before RL-02 is the rest of a window). */
const QUIET_LEAD_MS = 40_000;

class QuietPhase {
  readonly #plan: Plan;
  readonly #settings: RunSettings;
  readonly #clock: Clock;
  readonly #now: () => number;
  readonly #started: number;
  readonly #phased: PlannedCheck | undefined;
  readonly #spent: () => number;
  #quietAt: number | undefined;
  #waitedMs = 0;

  constructor(plan: Plan, settings: RunSettings, clock: Clock, now: () => number, spent: () => number) {
    this.#plan = plan;
    this.#spent = spent;
    this.#settings = settings;
    this.#clock = clock;
    this.#now = now;
    this.#started = now();
    const phased = plan.checks.find((p) => p.check.id === QUIET_CHECK && p.skipReason === undefined);
    this.#phased = phased !== undefined && plan.checks.length > 1 ? phased : undefined;
  }

  /** The plan's checks, RL-02 moved after every other one but the opt-in quota probe. */
  order(): readonly PlannedCheck[] {
    const phased = this.#phased;
    if (phased === undefined) return this.#plan.checks;
    const probe = (p: PlannedCheck) => p.check.needs?.includes("rateLimitProbe") === true;
    const rest = this.#plan.checks.filter((p) => p !== phased);
    return [...rest.filter((p) => !probe(p)), phased, ...rest.filter(probe)];
  }

  /**
   * Estimated time the scenarios from `planned` on (RL-02 apart) still take: at the throttle, or at
   * the pace of the run so far when that is slower (latency, a check that waits).
   */
  #remainingMs(planned: PlannedCheck): number {
    const order = this.order();
    const rest = order
      .slice(order.indexOf(planned))
      .filter((p) => p !== this.#phased && p.skipReason === undefined && p.check.kind === "scenario");
    const cost = rest.reduce((n, p) => n + p.cost, 0);
    const pace = this.#spent() > 0 ? (this.#now() - this.#started) / this.#spent() : 0;
    return cost * Math.max(60_000 / this.#settings.rpm, pace);
  }

  async beforeCheck(planned: PlannedCheck, hooks: RunHooks): Promise<void> {
    if (this.#phased === undefined || this.#quietAt !== undefined) return;
    const elapsed = this.#now() - this.#started;
    const remaining = this.#remainingMs(planned);
    // A run that ends within the window needs no quiet stretch: its start is one.
    if (elapsed + remaining < WINDOW_MS - QUIET_MS || remaining > QUIET_LEAD_MS) return;
    this.#quietAt = this.#now();
    hooks.onPause?.(QUIET_MS, `a quiet stretch for ${QUIET_CHECK}, which runs a window later`);
    await this.#clock.sleep(QUIET_MS);
    this.#waitedMs += QUIET_MS;
  }

  async beforePhased(hooks: RunHooks): Promise<void> {
    if (this.#quietAt === undefined) return;
    const wait = this.#quietAt + WINDOW_MS + 500 - this.#now();
    if (wait <= 0) return;
    hooks.onPause?.(wait, `${QUIET_CHECK} waits until the quiet stretch is the window's oldest part`);
    await this.#clock.sleep(wait);
    this.#waitedMs += wait;
  }

  /** RL-02's result says how it was run. */
  annotate(result: CheckResult): CheckResult {
    if (result.id !== QUIET_CHECK || this.#phased === undefined) return result;
    const how =
      this.#quietAt === undefined
        ? "run last, while the run's first request was still in the rolling window"
        : `run last, a window after a quiet stretch of ${QUIET_MS / 1000} s the harness kept (it waited ${Math.round(this.#waitedMs / 1000)} s in all for it)`;
    return { ...result, notes: [...result.notes, how] };
  }
}

/** A response check being applied to the run's exchanges. */
interface ActiveJudge {
  readonly check: ResponseCheck;
  readonly judge: ResponseJudge;
  /** Set when `inspect` itself threw: a harness bug, reported as such. */
  crash: string | undefined;
}

/**
 * Runs a plan against a target. Throws ConfigError when the target is unreachable, refuses the
 * API key, or cannot tell the signing secret from a wrong one.
 */
export async function runConformance(settings: RunSettings, hooks: RunHooks = {}): Promise<RunReport> {
  const plan = planRun(settings);
  hooks.onPlan?.(plan, settings);
  const clock = settings.clock;
  const now = () => (clock ?? performance).now();
  const started = now();
  const startedAt = new Date().toISOString();
  const redactor = redactorFor(settings);
  const bucket = new TokenBucket({
    perMinute: settings.rpm,
    burst: settings.burst,
    ...(clock ? { clock } : {}),
  });
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
    runTag: settings.runTag ?? runTag(settings.seed),
    signing: undefined,
    timeoutMs: settings.timeoutMs,
  };
  const runnable = plan.checks.filter((p) => p.skipReason === undefined);
  const judges: ActiveJudge[] = runnable.flatMap((p) =>
    p.check.kind === "response"
      ? [{ check: p.check, judge: new ResponseJudge(settings.level, inputs), crash: undefined }]
      : [],
  );
  const client = new HttpClient({
    baseUrl: settings.baseUrl,
    ...(settings.apiBasePath === undefined ? {} : { apiBasePath: settings.apiBasePath }),
    bucket,
    timeoutMs: settings.timeoutMs,
    ...(hooks.onSend ? { onSend: hooks.onSend } : {}),
    ...(hooks.onBackoff ? { onBackoff: hooks.onBackoff } : {}),
    onRecord: (exchange) => judgeExchange(judges, exchange),
  });
  const results: CheckResult[] = [];
  const total = plan.checks.length;
  const report = (result: CheckResult) => {
    results.push(result);
    hooks.onResult?.(result, results.length - 1, total);
  };
  try {
    const discovery = await discover(client, {
      baseUrl: settings.baseUrl,
      timeoutMs: settings.timeoutMs,
      apiKey: settings.apiKey,
      apiKeySource: settings.apiKeySource ?? "PARTNER_API_KEY",
    });
    let runInputs = inputs;
    if (plan.preflight > 0) {
      const signing = await preflightSigning(
        client,
        inputs,
        discovery,
        settings.signingSecretSource ?? "PARTNER_SIGNING_SECRET",
      );
      runInputs = { ...inputs, signing };
    }
    // The response checks' own requests go first, so every scenario after them is judged too.
    let begun = 0;
    const probes = new Map<string, ProbeOutcome>();
    for (const active of judges) {
      hooks.onCheckStart?.(active.check, begun++, total);
      probes.set(active.check.id, await runProbe(active.check, runInputs, discovery, client, now));
    }
    const quiet = new QuietPhase(plan, settings, clock ?? systemClock, now, () => client.spent);
    for (const planned of quiet.order()) {
      if (planned.check.id === QUIET_CHECK && planned.skipReason === undefined)
        await quiet.beforePhased(hooks);
      else if (planned.skipReason === undefined && planned.check.kind === "scenario")
        await quiet.beforeCheck(planned, hooks);
      if (planned.skipReason !== undefined)
        report(
          skippedResult(
            planned.check,
            planned.skipReason,
            planned.check.needs?.includes("rateLimitProbe") === true && !settings.rateLimitProbe,
          ),
        );
      else if (planned.check.kind === "scenario") {
        hooks.onCheckStart?.(planned.check, begun++, total);
        const result = await runScenario(
          planned.check,
          runInputs,
          discovery,
          client,
          redactor,
          settings.signingSecret,
          now,
        );
        report(quiet.annotate(result));
      }
    }
    for (const active of judges)
      report(
        responseResult(
          active,
          probes.get(active.check.id)!,
          client.exchanges,
          redactor,
          settings.signingSecret,
        ),
      );
  } finally {
    await client.close();
  }
  const summary: RunSummary = {
    passed: results.filter((r) => r.status === "passed").length,
    failed: results.filter((r) => r.status === "failed").length,
    warned: results.filter((r) => r.status === "warning").length,
    skipped: results.filter((r) => r.status === "skipped").length,
    notes: results.reduce((n, r) => n + r.notes.length, 0),
  };
  return {
    tool: "partner-yield-conformance",
    version: VERSION,
    baseUrl: settings.baseUrl,
    embedded: settings.embedded,
    level: settings.level,
    seed: settings.seed,
    startedAt,
    durationMs: Math.round(now() - started),
    plannedRequests: plan.requests,
    requests: client.spent,
    throttle: { rpm: settings.rpm, burst: settings.burst, waitedMs: Math.round(bucket.waitedMs) },
    results,
    summary,
    // Opt-in checks left out (RL-03 without --rate-limit-probe) are not gaps of the run.
    exitCode:
      summary.failed > 0 ||
      (settings.failOnSkip === true && results.some((r) => r.status === "skipped" && r.optIn !== true))
        ? 1
        : 0,
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

/** Applies every active response check to one recorded exchange. */
function judgeExchange(judges: readonly ActiveJudge[], exchange: Exchange): void {
  for (const active of judges) {
    if (active.crash !== undefined) continue;
    active.judge.begin(exchange);
    try {
      active.check.inspect(exchange, active.judge);
    } catch (error) {
      active.crash = error instanceof Error ? error.message : String(error);
    }
  }
}

interface ProbeOutcome {
  readonly context: CheckContext;
  readonly error: unknown;
  readonly durationMs: number;
}

async function runProbe(
  check: ResponseCheck,
  inputs: CheckInputs,
  discovery: Discovery,
  client: HttpClient,
  now: () => number,
): Promise<ProbeOutcome> {
  const context = new CheckContext(check.id, inputs, discovery, client, check.failure);
  const started = now();
  let error: unknown;
  try {
    await check.probe?.(context);
  } catch (caught) {
    error = caught;
  }
  return { context, error, durationMs: Math.round(now() - started) };
}

function baseResult(
  check: CheckDefinition,
): Pick<CheckResult, "id" | "title" | "category" | "kind" | "level" | "source"> {
  return {
    id: check.id,
    title: check.title,
    category: check.category,
    kind: check.kind,
    level: check.level,
    source: sourceOf(check.cites),
  };
}

async function runScenario(
  check: CheckDefinition & { kind: "scenario" },
  inputs: CheckInputs,
  discovery: Discovery,
  client: HttpClient,
  redactor: Redactor,
  signingSecret: string | undefined,
  now: () => number,
): Promise<CheckResult> {
  const t = new CheckContext(check.id, inputs, discovery, client, check.failure);
  const started = now();
  let outcome: Outcome = { status: "passed", message: undefined, failureKind: undefined, exchanges: [] };
  try {
    await check.run(t);
  } catch (error) {
    outcome = outcomeOf(error, t);
  }
  return {
    ...baseResult(check),
    status: outcome.status,
    message: outcome.message === undefined ? undefined : redactor.redact(outcome.message),
    failureKind: outcome.failureKind,
    notes: t.notes.map((n) => redactor.redact(n)),
    evidence: outcome.exchanges.map((e) => CheckContext.evidence(e, redactor, signingSecret)),
    requests: t.exchanges.reduce((n, e) => n + e.attempts, 0),
    durationMs: Math.round(now() - started),
  };
}

interface Outcome {
  readonly status: CheckResult["status"];
  readonly message: string | undefined;
  readonly failureKind: FailureKind | undefined;
  readonly exchanges: readonly Exchange[];
}

/** What a thrown outcome of a check (or a probe) means. */
function outcomeOf(error: unknown, t: CheckContext): Outcome {
  if (error instanceof CheckSkipped)
    return { status: "skipped", message: error.message, failureKind: undefined, exchanges: [] };
  if (error instanceof CheckWarning)
    return { status: "warning", message: error.message, failureKind: undefined, exchanges: error.exchanges };
  if (error instanceof CheckFailure) {
    // A 429 says the run hit the target's limit, not that the rule is broken (except for the
    // rate-limit checks, whose subject it is): it cannot pass, it cannot fail.
    const limited = error.exchanges.find((e) => e.response?.status === 429);
    if (limited !== undefined && !t.id.startsWith("RL-"))
      return {
        status: "warning",
        message: `rate limited (429) before this check could conclude; rerun it with a lower --rpm: ${error.message}`,
        failureKind: undefined,
        exchanges: error.exchanges,
      };
    return { status: "failed", message: error.message, failureKind: error.kind, exchanges: error.exchanges };
  }
  return {
    status: "failed",
    message: `the check stopped on an unexpected error: ${error instanceof Error ? error.message : String(error)}`,
    failureKind: "check_error",
    exchanges: t.exchanges.slice(-1),
  };
}

/** A response check's verdict over the whole run. */
function responseResult(
  active: ActiveJudge,
  probe: ProbeOutcome,
  exchanges: readonly Exchange[],
  redactor: Redactor,
  signingSecret: string | undefined,
): CheckResult {
  const { check, judge } = active;
  const notes = [...probe.context.notes, ...judge.notes].map((n) => redactor.redact(n));
  const requests = probe.context.exchanges.reduce((n, e) => n + e.attempts, 0);
  const evidence = (list: readonly Exchange[]) =>
    list.map((e) => CheckContext.evidence(e, redactor, signingSecret));
  const base = { ...baseResult(check), notes, requests, durationMs: probe.durationMs };
  if (active.crash !== undefined) {
    return {
      ...base,
      status: "failed",
      message: `the check stopped on an unexpected error: ${active.crash}`,
      failureKind: "check_error",
      evidence: [],
    };
  }
  const findings = judge.findings;
  if (findings.length > 0) {
    const shown = findings.slice(0, RESPONSE_EVIDENCE);
    const more = findings.length - shown.length;
    const message = [
      ...shown.map((f) => f.message),
      ...(more > 0 ? [`… and ${more} more of the run's ${judge.seen} responses it applies to`] : []),
    ].join("\n");
    return {
      ...base,
      status: "failed",
      message: redactor.redact(message),
      failureKind: shown[0]!.kind,
      evidence: evidence(shown.map((f) => f.exchange)),
    };
  }
  if (probe.error !== undefined && !(probe.error instanceof CheckSkipped)) {
    const outcome = outcomeOf(probe.error, probe.context);
    return {
      ...base,
      status: outcome.status,
      message: outcome.message === undefined ? undefined : redactor.redact(outcome.message),
      failureKind: outcome.failureKind,
      evidence: evidence(outcome.exchanges),
    };
  }
  if (judge.seen === 0) {
    const why = probe.error instanceof CheckSkipped ? `${probe.error.message}; ` : "";
    return {
      ...base,
      status: "skipped",
      message: `${why}no response of the run (${exchanges.length} recorded) is one this rule applies to`,
      failureKind: undefined,
      evidence: [],
    };
  }
  return { ...base, status: "passed", message: undefined, failureKind: undefined, evidence: [] };
}

function skippedResult(check: CheckDefinition, reason: string, optIn = false): CheckResult {
  return {
    ...(optIn ? { optIn } : {}),
    ...baseResult(check),
    status: "skipped",
    message: reason,
    failureKind: undefined,
    notes: [],
    evidence: [],
    requests: 0,
    durationMs: 0,
  };
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
