/**
 * Connection URLs without their credentials, for every line the CLI prints (the `serve` banner,
 * `db` on stdout, an admin command's refusal, any error on stderr). pg and ioredis both take a
 * password from the userinfo (`postgres://user:password@…`) AND from the query
 * (`?password=…`, `?sslpassword=…`): both are masked, and so is any query parameter named like a
 * credential, in any case. A text that will not parse as a URL is never echoed: it may hold one.
 * @module
 */
import { redactCredentials } from "@partner-yield/core/adapters";

/** What stands for a masked value. */
export const MASK = "***";

/** Query parameters whose value is a credential (compared in lower case). */
const SECRET_PARAMETERS: ReadonlySet<string> = new Set([
  "password",
  "pass",
  "secret",
  "token",
  "key",
  "sslpassword",
  "sslkey",
]);

/** A URL in running text: a scheme, `://`, then everything up to a space or a quote. */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>]+/gi;

/** `password=…` outside a URL (a libpq conninfo string, a driver's option dump). */
const SECRET_ASSIGNMENT = /\b(password|pass|secret|token|key|sslpassword|sslkey)(\s*=\s*)([^\s&;,"'`]+)/gi;

/** Masked values shorter than this are not searched for in running text (they would mask words). */
const MIN_LITERAL = 4;

/**
 * `url` with its userinfo password and every credential-named query parameter masked (and its
 * fragment, which no driver reads); "(unparsable URL)" when it does not parse.
 * @example redactUrl("postgres://app:pw@db/prod?sslmode=require&Password=pw"); // "postgres://app:***@db/prod?sslmode=require&Password=***"
 */
export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "(unparsable URL)";
  }
  if (url.password !== "") url.password = MASK;
  if (url.search !== "") {
    const masked = new URLSearchParams();
    let changed = false;
    for (const [name, value] of url.searchParams) {
      const secret = SECRET_PARAMETERS.has(name.toLowerCase());
      changed ||= secret;
      masked.append(name, secret ? MASK : value);
    }
    if (changed) url.search = masked.toString();
  }
  if (url.hash !== "") url.hash = MASK;
  return url.toString();
}

/**
 * The credentials a connection URL carries (its password, the values of its credential-named
 * query parameters, raw and decoded), to be masked wherever they appear; none when it does not
 * parse.
 * @example secretsOfUrl("redis://127.0.0.1:6379?password=s3cret"); // ["s3cret"]
 */
export function secretsOfUrl(text: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [];
  }
  const secrets = new Set<string>();
  const add = (value: string) => {
    if (value === "") return;
    secrets.add(value);
    try {
      secrets.add(decodeURIComponent(value));
    } catch {
      // Not valid percent-encoding: the raw form is what a message would quote.
    }
  };
  add(url.password);
  for (const [name, value] of url.searchParams) if (SECRET_PARAMETERS.has(name.toLowerCase())) add(value);
  for (const part of url.search.slice(1).split("&")) {
    const at = part.indexOf("=");
    if (at > 0 && SECRET_PARAMETERS.has(safeDecode(part.slice(0, at)).toLowerCase())) add(part.slice(at + 1));
  }
  if (url.hash.length > 1) add(url.hash.slice(1));
  return [...secrets];
}

/**
 * A message for a terminal or a log with every credential masked: the secrets of `urls` wherever
 * they occur (a driver may quote a password in an error), every URL in the text (`redactUrl`),
 * `password=…`-shaped assignments, and what looks like an API key or signing secret
 * (`redactCredentials`). `urls` are the connection URLs the command was given (undefined entries
 * are skipped; an entry `--flag=URL` counts as its URL).
 * @example redactConnectionText("cannot connect to redis://:pw@h:6379", []); // "cannot connect to redis://:***@h:6379"
 */
export function redactConnectionText(text: string, urls: readonly (string | undefined)[] = []): string {
  let out = text;
  const secrets = urls
    .flatMap((u) =>
      u === undefined ? [] : secretsOfUrl(u.startsWith("--") ? u.slice(u.indexOf("=") + 1) : u),
    )
    .filter((s) => s.length >= MIN_LITERAL)
    .sort((a, b) => b.length - a.length);
  for (const secret of secrets) out = out.split(secret).join(MASK);
  out = out.replace(URL_IN_TEXT, (url) => {
    // A URL that does not parse whole may still hold a password: keep only its scheme.
    const redacted = redactUrl(url);
    return redacted === "(unparsable URL)"
      ? `${url.slice(0, url.indexOf("://"))}://(unparsable URL)`
      : redacted;
  });
  out = out.replace(SECRET_ASSIGNMENT, (whole, name: string, sep: string, value: string) =>
    value === MASK ? whole : `${name}${sep}${MASK}`,
  );
  return redactCredentials(out);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
