/**
 * Rate limits (CONTRACT §7): the IETF RateLimit headers on every authenticated response, a
 * remaining count that counts down, and (opt-in, it spends the quota) a 429 with Retry-After.
 * @module
 */
import type { Exchange } from "../http/client.js";
import { contract } from "./citations.js";
import { type CheckContext, PRODUCTS_PATH } from "./context.js";
import type { CheckDefinition } from "./definition.js";
import type { ResponseJudge } from "./judge.js";

export interface RateLimitState {
  readonly policy: string;
  readonly quota: number;
  readonly window: number;
  readonly remaining: number;
  readonly reset: number;
}

/**
 * Parses `RateLimit-Policy: "sandbox";q=100;w=60` and `RateLimit: "sandbox";r=99;t=60`.
 * Returns a reason string when they are absent or malformed.
 */
export function parseRateLimit(headers: Readonly<Record<string, string>>): RateLimitState | string {
  const policy = headers["ratelimit-policy"];
  const limit = headers["ratelimit"];
  if (policy === undefined) return "RateLimit-Policy header missing";
  if (limit === undefined) return "RateLimit header missing";
  const p = parseItem(policy);
  const l = parseItem(limit);
  if (p === undefined) return `RateLimit-Policy is not "<name>";q=<n>;w=<s>: ${JSON.stringify(policy)}`;
  if (l === undefined) return `RateLimit is not "<name>";r=<n>;t=<s>: ${JSON.stringify(limit)}`;
  const [q, w, r, t] = [p.params["q"], p.params["w"], l.params["r"], l.params["t"]];
  if (q === undefined || w === undefined) return `RateLimit-Policy lacks q or w: ${JSON.stringify(policy)}`;
  if (r === undefined || t === undefined) return `RateLimit lacks r or t: ${JSON.stringify(limit)}`;
  if (p.name !== l.name) return `RateLimit names policy "${l.name}" but RateLimit-Policy is "${p.name}"`;
  return { policy: p.name, quota: q, window: w, remaining: r, reset: t };
}

function parseItem(value: string): { name: string; params: Record<string, number> } | undefined {
  const match = /^\s*"([^"]*)"((?:\s*;\s*[a-z]+=[0-9]+)*)\s*$/.exec(value);
  if (match === null) return undefined;
  const params: Record<string, number> = {};
  for (const part of match[2]!.split(";").slice(1)) {
    const [key, number] = part.trim().split("=");
    params[key!] = Number(number);
  }
  return { name: match[1]!, params };
}

/** What is incoherent in the rate-limit headers of one authenticated response (none: []). */
export function rateLimitProblems(
  state: RateLimitState,
  environment: "sandbox" | "production" | undefined,
): string[] {
  const problems: string[] = [];
  if (environment !== undefined && state.policy !== environment)
    problems.push(`the policy should be named after the environment "${environment}", got "${state.policy}"`);
  if (!(state.quota > 0)) problems.push(`q should be positive, got ${state.quota}`);
  if (state.window !== 60) problems.push(`w should be 60 (a rolling minute), got ${state.window}`);
  if (!(state.remaining >= 0 && state.remaining < state.quota))
    problems.push(`r=${state.remaining} should be below q=${state.quota} after a counted request`);
  if (!(state.reset >= 1 && state.reset <= state.window))
    problems.push(`t=${state.reset} should be from 1 to ${state.window} seconds`);
  return problems;
}

function whereOf(ex: Exchange): string {
  return `${ex.request.method} ${ex.request.path} → ${ex.response?.status}`;
}

/** The headers of one authenticated response, checked for coherence (fails the check). */
function coherentState(t: CheckContext, ex: Exchange): RateLimitState {
  const state = parseRateLimit(ex.response?.headers ?? {});
  if (typeof state === "string") t.failWith("header", `${whereOf(ex)}: ${state}`, ex);
  const problems = rateLimitProblems(state, t.inputs.environment);
  t.checkWith("header", problems.length === 0, `${whereOf(ex)}: ${problems.join("; ")}`, ex);
  return state;
}

function judgeState(judge: ResponseJudge, ex: Exchange): void {
  const state = parseRateLimit(ex.response?.headers ?? {});
  if (typeof state === "string") {
    judge.fail("header", `${whereOf(ex)}: ${state}`);
    return;
  }
  const problems = rateLimitProblems(state, judge.inputs.environment);
  if (problems.length > 0) judge.fail("header", `${whereOf(ex)}: ${problems.join("; ")}`);
}

const HEADERS = contract(
  "§7",
  'Each authenticated response carries the IETF headers `RateLimit-Policy: "sandbox";q=100;w=60` and `RateLimit: "sandbox";r=<remaining>;t=<seconds>`.',
);

/** Follow-up requests RL-02 may send hoping for a conclusive pair. */
const RL02_ATTEMPTS = 4;

/**
 * True when no request counted before a response with reset `t` (seconds, rounded up, until the
 * oldest counted request leaves) can have left the window `elapsed` seconds later.
 */
export function conclusive(t: number, elapsed: number): boolean {
  return t - 1 > elapsed;
}

export const RATE_LIMIT_CHECKS: readonly CheckDefinition[] = [
  {
    id: "RL-01",
    kind: "response",
    title: "Authenticated responses carry coherent RateLimit-Policy and RateLimit headers",
    category: "rate-limit",
    level: "reference",
    cites: [HEADERS],
    failure: "header",
    cost: 1,
    async probe(t: CheckContext) {
      await t.get(PRODUCTS_PATH);
    },
    inspect(ex, judge) {
      if (ex.response?.status !== 200 || ex.request.headers["X-Api-Key"] !== judge.inputs.apiKey) return;
      judge.applies();
      judgeState(judge, ex);
    },
  },
  {
    id: "RL-02",
    kind: "scenario",
    title: "The remaining count goes down with each request",
    category: "rate-limit",
    level: "reference",
    cites: [
      contract(
        "§7",
        "Per partner and environment: production 1000, sandbox 100 requests in **any rolling 60-second window**",
      ),
      contract("§7", "Every authenticated request counts, refused (429) ones do not."),
    ],
    failure: "header",
    cost: RL02_ATTEMPTS + 1,
    async run(t: CheckContext) {
      // In an exact rolling window r may legitimately stay put (or rise) when an old request leaves
      // the window between two requests. The previous response's t says, rounded up, when the
      // oldest counted request leaves: only when that is later than the next response can r be
      // required to drop. Otherwise try again, a bounded number of times, then call it inconclusive.
      let prev = await t.get(PRODUCTS_PATH);
      let prevState = coherentState(t, prev);
      let prevAt = performance.now();
      const seen: string[] = [`r=${prevState.remaining};t=${prevState.reset}`];
      for (let i = 0; i < RL02_ATTEMPTS; i++) {
        const ex = await t.get(PRODUCTS_PATH);
        const state = coherentState(t, ex);
        const at = performance.now();
        const elapsed = (at - prevAt) / 1000;
        seen.push(`r=${state.remaining};t=${state.reset}`);
        if (conclusive(prevState.reset, elapsed)) {
          t.check(
            state.remaining < prevState.remaining,
            `r went from ${prevState.remaining} (t=${prevState.reset}) to ${state.remaining} ${elapsed.toFixed(1)} s later: ` +
              "no counted request could leave the window in between, so it should have dropped by one",
            prev,
            ex,
          );
          if (state.remaining !== prevState.remaining - 1)
            t.note(
              `r went from ${prevState.remaining} to ${state.remaining}, not down by exactly one (other traffic on this key?)`,
            );
          return;
        }
        prev = ex;
        prevState = state;
        prevAt = at;
      }
      t.warning(
        `inconclusive: t never left room for a request to be counted before the oldest one left the window (${seen.join(", ")}); ` +
          "other traffic on this key, or a run slower than planned: rerun it alone (--only RL-02) after a minute without requests",
      );
    },
  },
  {
    id: "RL-03",
    kind: "scenario",
    title: "Past the quota, requests get 429 with Retry-After (opt-in probe)",
    category: "rate-limit",
    level: "reference",
    cites: [
      contract("§7", "A 429 carries `Retry-After` (seconds, never earlier than `t`)."),
      contract("§6", "429 `rate_limited`"),
    ],
    failure: "header",
    cost: (o) => o.probeBudget,
    needs: ["rateLimitProbe"],
    async run(t: CheckContext) {
      const budget = t.inputs.plan.probeBudget;
      const start = await t.get(PRODUCTS_PATH, { unthrottled: true });
      const state = coherentState(t, start);
      if (state.remaining + 2 > budget) {
        t.skip(
          `the quota left (${state.remaining}) needs ${state.remaining + 1} more requests, over --probe-budget ${budget}`,
        );
      }
      let refused: Exchange | undefined;
      for (let i = 0; i <= state.remaining && refused === undefined; i++) {
        const ex = await t.get(PRODUCTS_PATH, { unthrottled: true });
        if (t.status(ex) === 429) refused = ex;
      }
      if (refused === undefined) {
        t.failWith(
          "status",
          `${state.remaining + 1} requests past the advertised remaining ${state.remaining} were all accepted: no 429`,
        );
      }
      t.expectRefused(refused, "a request past the quota", { status: 429, code: "rate_limited" });
      const retryAfter = t.header(refused, "retry-after");
      t.check(retryAfter !== undefined, "the 429 has no Retry-After header", refused);
      t.check(
        /^[0-9]+$/.test(retryAfter.trim()) && Number(retryAfter) >= 1,
        `Retry-After should be whole seconds ≥ 1, got ${JSON.stringify(retryAfter)}`,
        refused,
      );
      const after = parseRateLimit(refused.response!.headers);
      if (typeof after !== "string") {
        t.check(after.remaining === 0, `the 429 should say r=0, got r=${after.remaining}`, refused);
        t.check(
          Number(retryAfter) >= after.reset,
          `Retry-After ${retryAfter} is earlier than the reset t=${after.reset}`,
          refused,
        );
      }
    },
  },
];
