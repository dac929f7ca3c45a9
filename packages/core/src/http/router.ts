/**
 * Routing comes first (CONTRACT §9): an unknown path is `404 not_found` and a known path with
 * another method `405 method_not_allowed` with `Allow`, both before authentication. Paths are
 * matched as received (not decoded); a trailing slash, an empty or an extra segment names no
 * route (docs/contract.md).
 * @module
 */
import { ApiError } from "./errors.js";
import type { PathParams } from "./handler.js";
import type { Route } from "./routes.js";

/** A routed request: the route and its path parameters. */
export interface RouteMatch {
  readonly route: Route;
  readonly params: PathParams;
  /** The route's method and template, e.g. `GET /products/{slug}` (`ResponseOutcome.route`). */
  readonly name: string;
}

export interface Router {
  /**
   * @throws ApiError `not_found` (404) or `method_not_allowed` (405, with `Allow`).
   */
  match(method: string, path: string): RouteMatch;
}

/** One segment of a template: a literal, or a parameter (`{name}`) and its name. */
interface Segment {
  readonly text: string;
  readonly param: boolean;
}

/** A route and its name (`GET /products/{slug}`), made once. */
interface NamedRoute {
  readonly route: Route;
  readonly name: string;
}

/** The routes sharing one path template, by method. */
interface PathEntry {
  readonly segments: readonly Segment[];
  readonly byMethod: ReadonlyMap<string, NamedRoute>;
  /** e.g. `GET, HEAD` */
  readonly allow: string;
}

/**
 * @example createRouter(ROUTES, "/api/partner").match("GET", "/api/partner/products/usdc-base-prime").params; // { slug: "usdc-base-prime" }
 */
export function createRouter(routes: readonly Route[], basePath: string): Router {
  const entries = pathEntries(routes);
  const prefix = `${basePath}/`;
  return {
    match(method, path) {
      if (!path.startsWith(prefix)) throw notFound();
      for (const entry of entries) {
        const params = matchSegments(entry.segments, path, prefix.length);
        if (params === undefined) continue;
        const named = entry.byMethod.get(method === "HEAD" ? "GET" : method);
        if (named === undefined) {
          throw new ApiError("method_not_allowed", `${method} is not allowed here; allowed: ${entry.allow}`, {
            headers: { allow: entry.allow },
          });
        }
        return { route: named.route, params, name: named.name };
      }
      throw notFound();
    },
  };
}

function pathEntries(routes: readonly Route[]): PathEntry[] {
  const byPath = new Map<string, Map<string, NamedRoute>>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? new Map<string, NamedRoute>();
    if (methods.has(route.method)) throw new Error(`two routes for ${route.method} ${route.path}`);
    methods.set(route.method, { route, name: `${route.method} ${route.path}` });
    byPath.set(route.path, methods);
  }
  return [...byPath].map(([path, byMethod]) => ({
    segments: path
      .slice(1)
      .split("/")
      .map((text) =>
        text.startsWith("{") ? { text: text.slice(1, -1), param: true } : { text, param: false },
      ),
    byMethod,
    allow: [...byMethod.keys()].flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m])).join(", "),
  }));
}

/**
 * The path parameters when `path` from `start` on, cut at each `/`, fits the template segment by
 * segment (the same as `path.slice(start).split("/")` compared with it, without building either).
 */
function matchSegments(template: readonly Segment[], path: string, start: number): PathParams | undefined {
  let params: Record<string, string> | undefined;
  let from = start;
  const last = template.length - 1;
  for (let i = 0; i <= last; i++) {
    const slash = path.indexOf("/", from);
    // Every segment but the last ends at a `/`; the last one runs to the end.
    if (i < last ? slash === -1 : slash !== -1) return undefined;
    const end = i < last ? slash : path.length;
    const expected = template[i]!;
    if (expected.param) {
      if (end === from) return undefined;
      params ??= {};
      params[expected.text] = path.slice(from, end);
    } else if (end - from !== expected.text.length || !path.startsWith(expected.text, from)) {
      return undefined;
    }
    from = end + 1;
  }
  return params ?? NO_PARAMS;
}

const NO_PARAMS: PathParams = Object.freeze({});

function notFound(): ApiError {
  return new ApiError("not_found", "no such endpoint");
}
