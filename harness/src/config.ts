/**
 * The options of a conformance run, from flags and the environment, validated up front: a bad
 * option is a usage error (exit 2) before any request is sent.
 * @module
 */

import type { Level, PlanOptions } from "./checks/types.js";
import { echoInput } from "./terminal.js";

/** Bad configuration or an unreachable target: exit code 2. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export const DEFAULTS = {
  level: "reference" as Level,
  rpm: 90,
  embeddedRpm: 3000,
  embeddedQuota: 1000,
  yieldSamples: 8,
  productSample: 10,
  concurrentDuplicates: 8,
  /** interface.md §8: the sandbox allows 100 requests a minute; the probe may spend one more. */
  probeBudget: 101,
  timeoutMs: 15_000,
  /** `properties --base-url`: runs per property; each may need 5 quotes (P₁, P₂, P₁ + P₂, one amount written two ways). */
  apiPropertyRuns: 10,
  /** `properties --base-url`: the request budget, shrinking included; with the default throttle, under a sandbox's 100 a minute. */
  apiPropertyBudget: 90,
  /** `properties --base-url`: products whose positions are read (every kind of product first), for the 2 wallets. */
  apiPropertyProducts: 8,
} as const;

/** The plan knobs at their defaults (for `list` and the docs). */
export const DEFAULT_PLAN: PlanOptions = {
  yieldSamples: DEFAULTS.yieldSamples,
  productSample: DEFAULTS.productSample,
  concurrentDuplicates: DEFAULTS.concurrentDuplicates,
  probeBudget: DEFAULTS.probeBudget,
};

/** Environment variables the runner reads. */
export const ENV = {
  baseUrl: "PARTNER_BASE_URL",
  apiKey: "PARTNER_API_KEY",
  signingSecret: "PARTNER_SIGNING_SECRET",
  otherEnvApiKey: "PARTNER_OTHER_ENV_API_KEY",
  revokedApiKey: "PARTNER_REVOKED_API_KEY",
} as const;

/** A new random seed: a 31-bit positive integer, printed in every report. */
export function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]! & 0x7fffffff;
}

export function parseIntegerOption(
  name: string,
  value: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (!/^-?[0-9]+$/.test(value.trim()))
    throw new ConfigError(`--${name} must be an integer, got ${echoInput(value)}`);
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`--${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return n;
}

export function parseLevel(value: string): Level {
  if (value === "spec" || value === "reference") return value;
  throw new ConfigError(`--level must be "spec" or "reference", got ${echoInput(value)}`);
}

/**
 * `--base-url`: where the API is mounted, an http(s) URL without query, fragment or credentials;
 * its path (if any) is kept, without a trailing `/`.
 * @example parseBaseUrl("http://127.0.0.1:8080/yield/v1/"); // "http://127.0.0.1:8080/yield/v1"
 */
export function parseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not echoed when it may hold a password.
    throw new ConfigError(
      `--base-url must be an absolute http(s) URL, got ${value.includes("@") ? "one that does not parse" : echoInput(value)}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`--base-url must use http or https, got ${url.protocol}`);
  }
  if (url.search !== "" || url.hash !== "")
    throw new ConfigError("--base-url must not have a query or fragment");
  if (url.username !== "" || url.password !== "")
    throw new ConfigError("--base-url must not carry credentials");
  return url.href.replace(/\/+$/, "");
}

/**
 * `--base-path`: the API's own base path under the base URL (core's `basePath`), `""` for the base
 * URL itself; without it, `defaultApiBasePath` (http/client.ts) decides from the base URL's path.
 * Leading slash, no trailing one; `/` is read as `""`.
 * @example parseBasePath("/v1/partner/"); // "/v1/partner"
 */
export function parseBasePath(value: string): string {
  const text = value.trim() === "/" ? "" : value.trim().replace(/\/+$/, "");
  if (!/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/.test(text))
    throw new ConfigError(
      `--base-path must be "" or "/" followed by path segments (e.g. /api/partner, /v1/partner), got ${echoInput(value)}`,
    );
  return text;
}

/** `--only EVT-03,AUTH` → ["EVT-03", "AUTH"]. */
export function parseOnly(value: string): string[] {
  const items = value
    .split(",")
    .map((s) => s.trim().toUpperCase())
    .filter((s) => s !== "");
  if (items.length === 0)
    throw new ConfigError("--only needs at least one check ID or prefix, e.g. --only EVT-03,AUTH");
  for (const item of items) {
    if (!/^[A-Z]+(-[0-9]{2})?$/.test(item)) {
      throw new ConfigError(
        `--only: ${JSON.stringify(item)} is neither a check ID (EVT-03) nor a prefix (EVT)`,
      );
    }
  }
  return items;
}
