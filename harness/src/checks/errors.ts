/**
 * Errors and HTTP hygiene (CONTRACT §6, §9; interface.md §1, §4): problem+json bodies, no secret
 * echoed, routing before authentication, no 5xx whatever the input. The response checks here
 * judge every response of the run as it is recorded.
 * @module
 */
import type { Exchange } from "../http/client.js";
import { missingSlug, unknownApiKey } from "./auth.js";
import { contract, GAPS, spec } from "./citations.js";
import {
  type CheckContext,
  EVENTS_PATH,
  excerpt,
  hex,
  PRODUCTS_PATH,
  productPath,
  yieldPath,
} from "./context.js";
import type { CheckDefinition } from "./definition.js";
import { Problem } from "./from-core.js";
import type { ResponseJudge } from "./judge.js";

/** Checks one error response against CONTRACT §6; returns what is wrong, or undefined. */
export function problemViolation(ex: Exchange): string | undefined {
  const response = ex.response;
  if (response === undefined || response.status < 400 || ex.request.method === "HEAD") return undefined;
  const where = `${ex.request.method} ${excerpt(ex.request.path, 100)} → ${response.status}`;
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

/** Secrets a response must not contain: the run's, and those its own request sent. */
function echoedSecret(judge: ResponseJudge, ex: Exchange): string | undefined {
  const response = ex.response;
  if (response === undefined) return undefined;
  const text = `${Object.values(response.headers).join("\n")}\n${response.text}`;
  const candidates: Array<[string, string | undefined]> = [
    ["the API key", judge.inputs.apiKey],
    ["the signing secret", judge.inputs.signingSecret],
    ["the other environment's API key", judge.inputs.otherEnvApiKey],
    ["the revoked API key", judge.inputs.revokedApiKey],
    ["the X-Api-Key sent", ex.request.headers["X-Api-Key"]],
    ["the X-Partner-Signature sent", ex.request.headers["X-Partner-Signature"]],
  ];
  for (const [what, value] of candidates) {
    if (value !== undefined && value.length >= 8 && text.includes(value)) return what;
  }
  return undefined;
}

function where(ex: Exchange): string {
  return `${ex.request.method} ${excerpt(ex.request.path, 80)} → ${ex.response?.status}`;
}

/** CONTRACT §9's headers on one response: X-Request-Id, Cache-Control: no-store, nosniff. */
function hygieneHeaders(judge: ResponseJudge, ex: Exchange): void {
  const headers = ex.response?.headers ?? {};
  judge.check((headers["x-request-id"] ?? "") !== "", "header", `${where(ex)}: X-Request-Id is missing`);
  judge.check(
    headers["cache-control"] === "no-store",
    "header",
    `${where(ex)}: Cache-Control should be no-store, got ${JSON.stringify(headers["cache-control"])}`,
  );
  judge.check(
    headers["x-content-type-options"] === "nosniff",
    "header",
    `${where(ex)}: X-Content-Type-Options should be nosniff, got ${JSON.stringify(headers["x-content-type-options"])}`,
  );
}

const HOSTILE_DEPTH = 5000;
const NO_500 = contract("§6", "No input, however malformed, produces a 500.");
const EVERY_RESPONSE = contract(
  "§9",
  "Every response: `Content-Type` `application/json; charset=utf-8` (errors: problem+json), `X-Request-Id`, `Cache-Control: no-store`, `X-Content-Type-Options: nosniff`.",
);

export const ERROR_CHECKS: readonly CheckDefinition[] = [
  {
    id: "ERR-01",
    kind: "response",
    title: "Every error is application/problem+json with the problem fields",
    category: "errors",
    level: "reference",
    cites: [
      contract(
        "§6",
        "Every error is `application/problem+json` (RFC 9457) with the success envelope's flag:",
      ),
      contract("§6", "`status` equals the HTTP status; `code` is stable and snake_case;"),
    ],
    failure: "schema",
    cost: 4,
    async probe(t: CheckContext) {
      const product = t.products()[0]!;
      await t.get(productPath(missingSlug(t)));
      await t.get(yieldPath(product.slug, "1e3"));
      await t.get("/api/partner/conformance-no-such-route");
      await t.request({ method: "DELETE", path: PRODUCTS_PATH, headers: { "X-Api-Key": t.inputs.apiKey } });
    },
    inspect(ex, judge) {
      if ((ex.response?.status ?? 0) < 400 || ex.request.method === "HEAD") return;
      judge.applies();
      const violation = problemViolation(ex);
      if (violation !== undefined)
        judge.fail(/Content-Type/.test(violation) ? "header" : "schema", violation);
    },
  },
  {
    id: "ERR-02",
    kind: "response",
    title: "No response echoes an API key, a signature or the signing secret",
    category: "errors",
    level: "reference",
    cites: [
      contract(
        "§6",
        "`detail` is for humans and never echoes a secret (no API key, no signature, no signing secret).",
      ),
    ],
    failure: "secret_leak",
    cost: 2,
    failedAuth: 1,
    async probe(t: CheckContext) {
      // A well-formed key that no partner holds (never one derived from the real key: the
      // evidence of a failure prints it), and a signature that matches nothing.
      await t.get(PRODUCTS_PATH, { key: unknownApiKey(t) });
      await t.postEvent({ body: t.newEvent(), signature: { literal: hex(t.randomBytes(32)) } });
    },
    inspect(ex, judge) {
      if (ex.response === undefined) return;
      judge.applies();
      const leaked = echoedSecret(judge, ex);
      if (leaked !== undefined)
        judge.fail(
          "secret_leak",
          `the response to ${ex.request.method} ${excerpt(ex.request.path, 80)} contains ${leaked}`,
        );
    },
  },
  {
    id: "ERR-03",
    kind: "scenario",
    title: "A known path with another method is 405 with Allow",
    category: "errors",
    level: "reference",
    cites: [
      contract("§6", "405 `method_not_allowed` with `Allow`"),
      contract("§9", "a known path with another method is `405` with `Allow`, before authentication."),
    ],
    failure: "header",
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
    kind: "scenario",
    title: "An unknown route is 404 not_found, before authentication",
    category: "errors",
    level: "reference",
    cites: [
      contract(
        "§9",
        "Routing comes first: an unknown path is `404 not_found` and a known path with another method is `405` with `Allow`, before authentication.",
      ),
    ],
    failure: "status",
    cost: 1,
    failedAuth: 1,
    async run(t: CheckContext) {
      const ex = await t.get("/api/partner/conformance-no-such-route", { key: null });
      t.expectRefused(ex, "GET an unknown route without a key", { status: 404, code: "not_found" });
    },
  },
  {
    id: "ERR-05",
    kind: "response",
    title: "No input, however malformed, produces a 5xx",
    category: "errors",
    level: "spec",
    cites: [NO_500],
    failure: "server_error",
    cost: 6,
    async probe(t: CheckContext) {
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
        t.note("no signing secret: the deeply nested event was not sent");
      }
    },
    inspect(ex, judge) {
      const status = ex.response?.status;
      if (status === undefined) return;
      judge.applies();
      if (status < 500) return;
      // CONTRACT §6 allows 503 with Retry-After while a store is down: a dependency, not the input.
      if (status === 503 && ex.response?.headers["retry-after"] !== undefined) {
        judge.note(`${where(ex)} with Retry-After: a dependency of the target was unavailable; rerun`);
        return;
      }
      judge.fail("server_error", `${where(ex)}: a server error`);
    },
  },
  {
    id: "ERR-06",
    kind: "response",
    title: "Responses are JSON, successes application/json; no CORS",
    category: "errors",
    level: "spec",
    cites: [
      spec("§1", "All responses are JSON."),
      spec("§4", "Successful responses are HTTP 200 with `application/json`."),
    ],
    tolerates: [GAPS.errorBody],
    reference: {
      asserts:
        "on successes charset=utf-8, X-Request-Id, Cache-Control: no-store, X-Content-Type-Options: nosniff; no CORS header on any response",
      cites: [EVERY_RESPONSE, contract("§9", "No CORS: keys never belong in a browser.")],
    },
    failure: "header",
    cost: 1,
    async probe(t: CheckContext) {
      await t.get(PRODUCTS_PATH);
    },
    inspect(ex, judge) {
      const r = ex.response;
      if (r === undefined) return;
      judge.applies();
      const type = r.headers["content-type"] ?? "";
      // The answer to a limit is not shown (interface.md §8): a 429 may say it any way it likes.
      if (ex.request.method !== "HEAD" && (judge.reference || r.status !== 429)) {
        try {
          JSON.parse(r.text);
        } catch {
          judge.fail(
            "not_json",
            `${where(ex)}: the body is not JSON: ${JSON.stringify(excerpt(r.text, 80))}`,
          );
        }
      }
      if (r.status === 200)
        judge.check(
          /^application\/json\b/i.test(type),
          "header",
          `${where(ex)}: Content-Type should be application/json, got ${JSON.stringify(type)}`,
        );
      if (!judge.reference) return;
      judge.check(
        r.headers["access-control-allow-origin"] === undefined,
        "header",
        `${where(ex)}: CORS header Access-Control-Allow-Origin present (keys never belong in a browser)`,
      );
      if (r.status !== 200) return;
      judge.check(
        /;\s*charset=utf-8/i.test(type),
        "header",
        `${where(ex)}: Content-Type should declare charset=utf-8, got ${JSON.stringify(type)}`,
      );
      hygieneHeaders(judge, ex);
    },
  },
  {
    id: "ERR-07",
    kind: "scenario",
    title: "HEAD is answered as GET without a body",
    category: "errors",
    level: "reference",
    cites: [contract("§9", "`HEAD` is answered as `GET` without a body.")],
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const ex = await t.request({
        method: "HEAD",
        path: PRODUCTS_PATH,
        headers: { "X-Api-Key": t.inputs.apiKey },
      });
      t.check(t.status(ex) === 200, `HEAD products: expected 200, got ${t.status(ex)}`, ex);
      t.checkWith("value", ex.response!.text === "", "HEAD products: the response has a body", ex);
      const type = t.header(ex, "content-type") ?? "";
      t.checkWith(
        "header",
        /^application\/json\b/i.test(type),
        `HEAD products: Content-Type should be that of GET, got ${JSON.stringify(type)}`,
        ex,
      );
    },
  },
  {
    id: "ERR-08",
    kind: "response",
    title: "Every error response carries the hygiene headers",
    category: "errors",
    level: "reference",
    cites: [EVERY_RESPONSE],
    failure: "header",
    cost: 1,
    async probe(t: CheckContext) {
      await t.get(productPath(missingSlug(t, 8)));
    },
    inspect(ex, judge) {
      const r = ex.response;
      if (r === undefined || r.status < 400) return;
      judge.applies();
      const type = r.headers["content-type"] ?? "";
      judge.check(
        type.toLowerCase().startsWith("application/problem+json") && /;\s*charset=utf-8/i.test(type),
        "header",
        `${where(ex)}: Content-Type should be application/problem+json; charset=utf-8, got ${JSON.stringify(type)}`,
      );
      hygieneHeaders(judge, ex);
    },
  },
];
