/**
 * The request target (RFC 9112 §3.2) as the core's path and query. Origin-form (`/path?query`) is
 * split as it is; absolute-form (`http://host/path?query`, which a server MUST accept, RFC 9112
 * §3.2.2) is routed exactly like the same origin-form target.
 * @module
 */

export interface RequestTarget {
  /** The path as sent (not decoded, not normalised), or the whole target when it has no path. */
  readonly path: string;
  /** Everything after the first `?`, without it; "" when absent. */
  readonly query: string;
}

/** Scheme and authority of an absolute-form target: what precedes its path. */
const SCHEME_AND_AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * Splits a request target into path and query.
 *
 * An absolute-form target must parse as an `http:` or `https:` URL (its host is not checked: one
 * instance serves whatever name it is reached by); its path and query are then taken from the target
 * as sent, not from the parsed URL, which would resolve `..` and `%2e` segments and re-encode
 * characters, and so route `http://h/a/%2e%2e` unlike `/a/%2e%2e`. Any other target (`*`, an
 * authority, garbage) is returned whole as the path: it names no route, and the core answers
 * `404 not_found` (CONTRACT §9).
 *
 * @example splitTarget("/api/partner/products?x=1"); // { path: "/api/partner/products", query: "x=1" }
 * @example splitTarget("http://api.example/healthz"); // { path: "/healthz", query: "" }
 * @example splitTarget("*"); // { path: "*", query: "" }
 */
export function splitTarget(target: string): RequestTarget {
  let originForm = target;
  if (!target.startsWith("/")) {
    const prefix = SCHEME_AND_AUTHORITY.exec(target)?.[0];
    if (prefix === undefined || !isHttpUrl(target)) return { path: target, query: "" };
    originForm = target.slice(prefix.length);
    if (!originForm.startsWith("/")) originForm = `/${originForm}`;
  }
  const q = originForm.indexOf("?");
  return q === -1
    ? { path: originForm, query: "" }
    : { path: originForm.slice(0, q), query: originForm.slice(q + 1) };
}

function isHttpUrl(target: string): boolean {
  try {
    const url = new URL(target);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
