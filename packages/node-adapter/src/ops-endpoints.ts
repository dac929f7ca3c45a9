/**
 * The adapter's own endpoints, answered without a key and outside the core: `GET /healthz` (the
 * process answers) and `GET /readyz` (this instance can serve: not draining, its own checks ok;
 * the shared stores are reported, CONTRACT §9).
 * @module
 */
import { ApiError, type PartnerApiHandler, type PlainResponse } from "@partner-yield/core";
import { problemResponse } from "./refusal.js";
import { settlesWithin } from "./settles-within.js";

/** The API handler, plus readiness when it has one (a `PartnerApi` does). */
export type ListenerTarget = PartnerApiHandler & {
  ready?: () => Promise<boolean>;
  /**
   * Named checks of the stores (e.g. `events: () => pool ping`), each reported by `/readyz`
   * ("ok", or "unavailable" when it rejects or takes over 2 s). A shared store down does not
   * make `/readyz` fail: every instance shares it, and taking them all out of the load balancer
   * at once helps nobody (the requests that need it are answered 503 with Retry-After).
   */
  readinessChecks?: Readonly<Record<string, () => Promise<void>>> | undefined;
  /**
   * Named checks of this instance's own state (e.g. `database_pool`: its pool exhausted), each
   * answering "ok" or the state that makes `/readyz` answer 503 (e.g. "exhausted").
   */
  instanceChecks?: Readonly<Record<string, () => string>> | undefined;
};

/** Longest a store may take to answer a `/readyz` check. */
const READINESS_CHECK_MS = 2000;

const OPS_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
} as const;

/** The adapter's own endpoints, not logged unless `logHealthChecks`. */
export function isOps(path: string): boolean {
  return path === "/healthz" || path === "/readyz";
}

/** `/healthz` and `/readyz`; `HEAD` gets the headers of `GET`, Content-Length included. */
export async function answerOps(
  api: ListenerTarget,
  path: string,
  method: string,
  requestId: string,
  draining: boolean,
): Promise<PlainResponse> {
  if (method !== "GET" && method !== "HEAD") {
    // Refused like any other method a route does not take (CONTRACT §6): problem+json with Allow.
    const problem = new ApiError("method_not_allowed", `${path} answers GET and HEAD only`, {
      headers: { allow: "GET, HEAD" },
    });
    return problemResponse(problem, requestId);
  }
  const headers: Record<string, string> = { ...OPS_HEADERS, "x-request-id": requestId };
  let status = 200;
  let body = '{"status":"ok"}';
  if (path === "/readyz") {
    // Fails only on this instance's own state (draining, closed, its own checks); the shared
    // stores are reported, and one that is down makes the answer "degraded", still 200.
    let ready = !draining;
    if (ready && api.ready !== undefined) ready = await api.ready().catch(() => false);
    const stores = ready ? await checkStores(api.readinessChecks) : undefined;
    const instance = ready ? checkInstance(api.instanceChecks) : undefined;
    if (instance !== undefined && Object.values(instance).some((s) => s !== "ok")) ready = false;
    status = ready ? 200 : 503;
    // Every 503 says when to ask again (CONTRACT §6): the checks are retried at once, so 1 s.
    if (!ready) headers["retry-after"] = "1";
    const degraded = stores !== undefined && Object.values(stores).some((s) => s !== "ok");
    const state = ready ? (degraded ? "degraded" : "ready") : draining ? "draining" : "not_ready";
    body = JSON.stringify({
      status: state,
      ...(stores === undefined ? {} : { stores }),
      ...(instance === undefined ? {} : { instance }),
    });
  }
  const route = path === "/readyz" ? "GET /readyz" : "GET /healthz";
  if (method !== "HEAD") return { status, headers, body, route };
  const length = String(Buffer.byteLength(body));
  return { status, headers: { ...headers, "content-length": length }, body: null, route };
}

/** This instance's own checks for `/readyz`: "ok" or a state (a check that throws: "failed"). */
function checkInstance(
  checks: Readonly<Record<string, () => string>> | undefined,
): Record<string, string> | undefined {
  if (checks === undefined || Object.keys(checks).length === 0) return undefined;
  const states: Record<string, string> = {};
  for (const [name, check] of Object.entries(checks)) {
    try {
      states[name] = check();
    } catch {
      states[name] = "failed";
    }
  }
  return states;
}

/**
 * Each store's state for `/readyz`: "ok" or "unavailable". The reason stays out of the answer,
 * which needs no key: it would name internal hosts and ports.
 */
async function checkStores(
  checks: Readonly<Record<string, () => Promise<void>>> | undefined,
): Promise<Record<string, string> | undefined> {
  if (checks === undefined) return undefined;
  const names = Object.keys(checks);
  const results = await Promise.all(
    names.map(async (name) => {
      try {
        return (await settlesWithin(checks[name]!(), READINESS_CHECK_MS)) ? "ok" : "unavailable";
      } catch {
        return "unavailable";
      }
    }),
  );
  return Object.fromEntries(names.map((name, i) => [name, results[i]!]));
}
