/**
 * Errors and HTTP hygiene (CONTRACT §6, §9; interface.md §4 for "200 with application/json"):
 * problem+json bodies, no secret echoed, routing before authentication, no 5xx whatever the input.
 * Several checks also inspect every response recorded earlier in the run.
 * @module
 */
import { Problem } from "@partner-yield/core";
import type { Exchange } from "../http/client.js";
import { missingSlug, unknownApiKey } from "./auth.js";
import { type CheckContext, EVENTS_PATH, excerpt, PRODUCTS_PATH, productPath, yieldPath } from "./context.js";
import type { CheckDefinition } from "./types.js";

/** Checks one error response against CONTRACT §6; returns what is wrong, or undefined. */
export function problemViolation(ex: Exchange): string | undefined {
  const response = ex.response;
  if (response === undefined || response.status < 400 || ex.request.method === "HEAD") return undefined;
  const where = `${ex.request.method} ${ex.request.path} → ${response.status}`;
  const type = response.headers["content-type"] ?? "";
  if (!/^application\/problem\+json\b/i.test(type)) {
    return `${where}: Content-Type should be application/problem+json, got ${JSON.stringify(type)}`;
  }
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    return `${where}: the body is not JSON: ${excerpt(response.text, 80)}`;
  }
  const parsed = Problem.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `${where}: not a problem body: ${issue.path.join(".") || "(root)"}: ${issue.message}`;
  }
  if (parsed.data.status !== response.status) {
    return `${where}: "status" ${parsed.data.status} differs from the HTTP status`;
  }
  return undefined;
}

/** Secrets a response must not contain: the run's, and those this very request sent. */
function echoedSecret(t: CheckContext, ex: Exchange): string | undefined {
  const response = ex.response;
  if (response === undefined) return undefined;
  const text = `${Object.values(response.headers).join("\n")}\n${response.text}`;
  const candidates: Array<[string, string | undefined]> = [
    ["the API key", t.inputs.apiKey],
    ["the signing secret", t.inputs.signingSecret],
    ["the other environment's API key", t.inputs.otherEnvApiKey],
    ["the X-Api-Key sent", ex.request.headers["X-Api-Key"]],
    ["the X-Partner-Signature sent", ex.request.headers["X-Partner-Signature"]],
  ];
  for (const [what, value] of candidates) {
    if (value !== undefined && value.length >= 8 && text.includes(value)) return what;
  }
  return undefined;
}

const HOSTILE_DEPTH = 5000;

export const ERROR_CHECKS: readonly CheckDefinition[] = [
  {
    id: "ERR-01",
    title: "Every error is application/problem+json with the problem fields",
    category: "errors",
    level: "reference",
    source: "CONTRACT §6",
    cost: 4,
    async run(t: CheckContext) {
      const product = t.products()[0]!;
      await t.get(productPath(missingSlug(t)));
      await t.get(yieldPath(product.slug, "1e3"));
      await t.get("/api/partner/conformance-no-such-route");
      await t.request({ method: "DELETE", path: PRODUCTS_PATH, headers: { "X-Api-Key": t.inputs.apiKey } });
      const errors = t.allExchanges.filter((ex) => (ex.response?.status ?? 0) >= 400);
      for (const ex of errors) {
        const violation = problemViolation(ex);
        t.check(violation === undefined, violation!, ex);
      }
    },
  },
  {
    id: "ERR-02",
    title: "No response echoes an API key, a signature or the signing secret",
    category: "errors",
    level: "reference",
    source: "CONTRACT §6 (detail never echoes a secret)",
    cost: 2,
    failedAuth: 1,
    async run(t: CheckContext) {
      // A well-formed key that no partner holds (never one derived from the real key: the
      // evidence of a failure prints it).
      await t.get(PRODUCTS_PATH, { key: unknownApiKey(t) });
      const signature = [...t.randomBytes(32)].map((b) => b.toString(16).padStart(2, "0")).join("");
      await t.postEvent({ body: t.newEvent(), signature: { literal: signature } });
      for (const ex of t.allExchanges) {
        const leaked = echoedSecret(t, ex);
        t.check(
          leaked === undefined,
          `the response to ${ex.request.method} ${ex.request.path} contains ${leaked}`,
          ex,
        );
      }
    },
  },
  {
    id: "ERR-03",
    title: "A known path with another method is 405 with Allow",
    category: "errors",
    level: "reference",
    source: "CONTRACT §6, §9",
    cost: 2,
    async run(t: CheckContext) {
      const auth = { "X-Api-Key": t.inputs.apiKey };
      const cases: Array<[string, string, string]> = [
        ["DELETE", PRODUCTS_PATH, "GET"],
        ["GET", EVENTS_PATH, "POST"],
      ];
      for (const [method, path, allowed] of cases) {
        const ex = await t.request({ method, path, headers: auth });
        t.expectRefused(ex, `${method} ${path}`, { status: 405, code: "method_not_allowed" });
        const allow = t.header(ex, "allow") ?? "";
        const methods = allow.split(",").map((m) => m.trim().toUpperCase());
        t.check(
          methods.includes(allowed),
          `${method} ${path}: Allow should list ${allowed}, got ${JSON.stringify(allow)}`,
          ex,
        );
      }
    },
  },
  {
    id: "ERR-04",
    title: "An unknown route is 404 not_found, before authentication",
    category: "errors",
    level: "reference",
    source: "CONTRACT §6, §9 (routing comes first)",
    cost: 1,
    failedAuth: 1,
    async run(t: CheckContext) {
      const ex = await t.get("/api/partner/conformance-no-such-route", { key: null });
      t.expectRefused(ex, "GET an unknown route without a key", { status: 404, code: "not_found" });
    },
  },
  {
    id: "ERR-05",
    title: "No input, however malformed, produces a 5xx",
    category: "errors",
    level: "spec",
    source: "interface.md (no 5xx), CONTRACT §6",
    cost: 6,
    async run(t: CheckContext) {
      const product = t.products()[0]!;
      await t.get(productPath("x".repeat(300)));
      await t.get(`${PRODUCTS_PATH}/%00%E2%82%AC..%2F${"%FF"}`);
      await t.get(yieldPath(product.slug, "9".repeat(5000)));
      await t.get(`${productPath(product.slug)}/position?address=${"0x".padEnd(5000, "f")}`);
      await t.get(`${productPath(product.slug)}/yield-calc?amount=%E0%A4%A`);
      if (t.inputs.signingSecret !== undefined) {
        const deep = `{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":${"[".repeat(HOSTILE_DEPTH)}${"]".repeat(HOSTILE_DEPTH)}}`;
        await t.postEvent({ body: deep });
      } else {
        t.warn("no signing secret: the deeply nested event was not sent");
      }
      for (const ex of t.allExchanges) {
        const status = ex.response?.status ?? 0;
        t.check(status < 500, `${ex.request.method} ${excerpt(ex.request.path, 100)} answered ${status}`, ex);
      }
    },
  },
  {
    id: "ERR-06",
    title: "Responses carry the content type and hygiene headers",
    category: "errors",
    level: "spec",
    source: "interface.md §4 (200 with application/json)",
    reference:
      "charset=utf-8, X-Request-Id, Cache-Control: no-store, X-Content-Type-Options: nosniff, no CORS (CONTRACT §9)",
    cost: 1,
    async run(t: CheckContext) {
      await t.get(PRODUCTS_PATH);
      for (const ex of t.allExchanges) {
        const r = ex.response;
        if (r === undefined) continue;
        const where = `${ex.request.method} ${excerpt(ex.request.path, 80)} → ${r.status}`;
        const type = r.headers["content-type"] ?? "";
        if (r.status === 200) {
          t.check(
            /^application\/json\b/i.test(type),
            `${where}: Content-Type should be application/json, got ${JSON.stringify(type)}`,
            ex,
          );
        }
        if (!t.reference) continue;
        t.check(
          /;\s*charset=utf-8/i.test(type),
          `${where}: Content-Type should declare charset=utf-8, got ${JSON.stringify(type)}`,
          ex,
        );
        t.check((r.headers["x-request-id"] ?? "") !== "", `${where}: X-Request-Id is missing`, ex);
        t.check(
          r.headers["cache-control"] === "no-store",
          `${where}: Cache-Control should be no-store, got ${JSON.stringify(r.headers["cache-control"])}`,
          ex,
        );
        t.check(
          r.headers["x-content-type-options"] === "nosniff",
          `${where}: X-Content-Type-Options should be nosniff`,
          ex,
        );
        t.check(
          r.headers["access-control-allow-origin"] === undefined,
          `${where}: CORS header Access-Control-Allow-Origin present (keys never belong in a browser)`,
          ex,
        );
      }
    },
  },
  {
    id: "ERR-07",
    title: "HEAD is answered as GET without a body",
    category: "errors",
    level: "reference",
    source: "CONTRACT §9",
    cost: 1,
    async run(t: CheckContext) {
      const ex = await t.request({
        method: "HEAD",
        path: PRODUCTS_PATH,
        headers: { "X-Api-Key": t.inputs.apiKey },
      });
      t.check(t.status(ex) === 200, `HEAD products: expected 200, got ${t.status(ex)}`, ex);
      t.check(ex.response!.text === "", "HEAD products: the response has a body", ex);
      const type = t.header(ex, "content-type") ?? "";
      t.check(
        /^application\/json\b/i.test(type),
        `HEAD products: Content-Type should be that of GET, got ${JSON.stringify(type)}`,
        ex,
      );
    },
  },
];

/** Run after everything else (the rate-limit probe included), so they see every response. */
export const FINAL_ERROR_CHECKS: readonly CheckDefinition[] = [
  {
    id: "ERR-08",
    title: "Every response of the run, errors included, carries the hygiene headers",
    category: "errors",
    level: "reference",
    source: "CONTRACT §9 (every response)",
    cost: 2,
    async run(t: CheckContext) {
      // Requests of its own only for what the run has not shown yet (after the rate-limit probe
      // the quota is spent: a request now would wait for it).
      const statuses = t.allExchanges.map((ex) => ex.response?.status ?? 0);
      if (!statuses.some((s) => s === 200)) await t.get(PRODUCTS_PATH);
      if (!statuses.some((s) => s >= 400)) await t.get(productPath(missingSlug(t, 8)));
      let seen = 0;
      for (const ex of t.allExchanges) {
        const r = ex.response;
        if (r === undefined) continue;
        seen++;
        const where = `${ex.request.method} ${excerpt(ex.request.path, 80)} → ${r.status}`;
        const type = r.headers["content-type"] ?? "";
        const expected = r.status >= 400 ? "application/problem+json" : "application/json";
        t.check(
          type.toLowerCase().startsWith(expected) && /;\s*charset=utf-8/i.test(type),
          `${where}: Content-Type should be ${expected}; charset=utf-8, got ${JSON.stringify(type)}`,
          ex,
        );
        t.check((r.headers["x-request-id"] ?? "") !== "", `${where}: X-Request-Id is missing`, ex);
        t.check(
          r.headers["cache-control"] === "no-store",
          `${where}: Cache-Control should be no-store, got ${JSON.stringify(r.headers["cache-control"])}`,
          ex,
        );
        t.check(
          r.headers["x-content-type-options"] === "nosniff",
          `${where}: X-Content-Type-Options should be nosniff, got ${JSON.stringify(r.headers["x-content-type-options"])}`,
          ex,
        );
      }
      t.check(seen > 0, "no response to inspect");
    },
  },
];
