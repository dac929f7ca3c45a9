/**
 * The router matches without splitting the path (router.ts); this property holds it to the plain
 * definition: the path below the base cut at every `/`, compared segment by segment with each
 * template, a `{name}` taking any non-empty segment.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ApiError } from "../../src/http/errors.js";
import { createRouter } from "../../src/http/router.js";
import { ROUTES } from "../../src/http/routes.js";
import { fcParams } from "../../src/testing/index.js";

const BASE = "/api/partner";

type Outcome = { operationId: string; params: Record<string, string> } | { code: string; allow?: string };

/** The definition: split, then compare (the router's code before it stopped splitting). */
function reference(method: string, path: string): Outcome {
  if (!path.startsWith(`${BASE}/`)) return { code: "not_found" };
  const segments = path.slice(BASE.length + 1).split("/");
  const templates = [...new Set(ROUTES.map((r) => r.path))];
  for (const template of templates) {
    const parts = template.slice(1).split("/");
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let fits = true;
    parts.forEach((part, i) => {
      const actual = segments[i]!;
      if (part.startsWith("{")) {
        if (actual === "") fits = false;
        else params[part.slice(1, -1)] = actual;
      } else if (part !== actual) fits = false;
    });
    if (!fits) continue;
    const routes = ROUTES.filter((r) => r.path === template);
    const route = routes.find((r) => r.method === (method === "HEAD" ? "GET" : method));
    if (route === undefined) {
      const allow = routes.flatMap((r) => (r.method === "GET" ? ["GET", "HEAD"] : [r.method])).join(", ");
      return { code: "method_not_allowed", allow };
    }
    return { operationId: route.operationId, params };
  }
  return { code: "not_found" };
}

function actual(method: string, path: string): Outcome {
  try {
    const { route, params } = createRouter(ROUTES, BASE).match(method, path);
    return { operationId: route.operationId, params: { ...params } };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const allow = error.headers?.["allow"];
    return allow === undefined ? { code: error.code } : { code: error.code, allow };
  }
}

const piece = fc.constantFrom(
  "",
  "api",
  "partner",
  "products",
  "usdc-base-prime",
  "position",
  "yield-calc",
  "webhooks",
  "inbound",
  "openapi.json",
  "x",
  "%2F",
  "products/",
);

test("matching equals the split-and-compare definition for any path and method", () => {
  fc.assert(
    fc.property(
      fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE"),
      fc.constantFrom("", BASE, `${BASE}/`, "/api/partnerx/", "/"),
      fc.array(piece, { maxLength: 5 }),
      (method, start, pieces) => {
        const path =
          start === "" || start.endsWith("/") ? start + pieces.join("/") : `${start}/${pieces.join("/")}`;
        assert.deepEqual(actual(method, path), reference(method, path), path);
      },
    ),
    fcParams(process.env),
  );
});

test("examples: a product, its position, a trailing slash, an empty segment, a wrong method", () => {
  assert.deepEqual(actual("GET", `${BASE}/products/usdc-base-prime`), {
    operationId: "getProduct",
    params: { slug: "usdc-base-prime" },
  });
  assert.deepEqual(actual("HEAD", `${BASE}/products/a/position`), {
    operationId: "getPosition",
    params: { slug: "a" },
  });
  assert.deepEqual(actual("GET", `${BASE}/products/`), { code: "not_found" });
  assert.deepEqual(actual("GET", `${BASE}/products//position`), { code: "not_found" });
  assert.deepEqual(actual("POST", `${BASE}/products`), { code: "method_not_allowed", allow: "GET, HEAD" });
});
