/**
 * Authentication (interface.md §1, §4–§5, CONTRACT §4): every endpoint needs a key of this
 * environment, and a bad key is refused before anything else is looked at.
 * @module
 */
import { crc32 } from "node:zlib";
import { contract, decision, GAPS, spec } from "./citations.js";
import { type CheckContext, hex, PRODUCTS_PATH, positionPath, productPath, yieldPath } from "./context.js";
import type { CheckDefinition } from "./definition.js";

/** A slug no target holds, seeded. */
export function missingSlug(t: CheckContext, salt = 0): string {
  return `conformance-missing-${hex(t.randomBytes(6, salt))}`;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function base62(value: number, width: number): string {
  let out = "";
  for (let rest = value; rest > 0; rest = Math.floor(rest / 62)) out = BASE62[rest % 62] + out;
  return out.padStart(width, "0");
}

/**
 * A well-formed key (CONTRACT §4: prefix, 32 base62 characters, a 6-character base62 CRC-32 of
 * what precedes, docs/contract.md) that no partner holds, built by the harness itself.
 * @example wellFormedKey("sandbox", bytes); // "ypk_test_…" (47 characters)
 */
export function wellFormedKey(environment: "sandbox" | "production", random: Uint8Array): string {
  const body = `${environment === "sandbox" ? "ypk_test_" : "ypk_live_"}${[...random.slice(0, 32)].map((b) => BASE62[b % 62]).join("")}`;
  return `${body}${base62(crc32(body) >>> 0, 6)}`;
}

/** A well-formed key of the run's environment that no partner holds. */
export function unknownApiKey(t: CheckContext, salt = 100): string {
  return wellFormedKey(t.inputs.environment ?? "sandbox", t.randomBytes(32, salt));
}

const REQUIRED = spec("§4", "All endpoints require header `X-Api-Key` (see Authentication).");
const INVALID = contract(
  "§4",
  "Missing key → `401 missing_api_key`; unknown, malformed or revoked → `401 invalid_api_key`;",
);

export const AUTH_CHECKS: readonly CheckDefinition[] = [
  {
    id: "AUTH-01",
    kind: "scenario",
    title: "A request without X-Api-Key is refused",
    category: "auth",
    level: "spec",
    cites: [REQUIRED, spec("§5", "Every endpoint takes the API key in the header `X-Api-Key`.")],
    tolerates: [GAPS.statusCodes],
    reference: { asserts: "401 missing_api_key", cites: [INVALID] },
    failure: "status",
    cost: 1,
    failedAuth: 1,
    async run(t: CheckContext) {
      const ex = await t.get(PRODUCTS_PATH, { key: null });
      t.expectRefused(ex, "GET products without a key", { status: 401, code: "missing_api_key" });
    },
  },
  {
    id: "AUTH-02",
    kind: "scenario",
    title: "An unknown or malformed API key is refused",
    category: "auth",
    level: "spec",
    cites: [REQUIRED, spec("§1", "The partner is the authenticated caller.")],
    tolerates: [GAPS.statusCodes],
    reference: { asserts: "401 invalid_api_key for both", cites: [INVALID] },
    failure: "status",
    cost: 2,
    failedAuth: 2,
    async run(t: CheckContext) {
      const wellFormed = await t.get(PRODUCTS_PATH, { key: unknownApiKey(t) });
      t.expectRefused(wellFormed, "a well-formed key no partner holds", {
        status: 401,
        code: "invalid_api_key",
      });
      const malformed = await t.get(PRODUCTS_PATH, { key: "not-an-api-key" });
      t.expectRefused(malformed, "a malformed key", { status: 401, code: "invalid_api_key" });
    },
  },
  {
    id: "AUTH-03",
    kind: "scenario",
    title: "A key of the other environment is refused",
    category: "auth",
    level: "spec",
    cites: [
      spec(
        "§5",
        "Two kinds of key exist: a sandbox key (works against `{sandbox_base_url}`) and a production key (works against `{base_url}`).",
      ),
    ],
    tolerates: [GAPS.statusCodes],
    reference: {
      asserts: "401 wrong_environment, and the detail names the key's environment",
      cites: [
        contract(
          "§4",
          "a key of the other environment → `401 wrong_environment` (the message names the environment the key belongs to).",
        ),
      ],
    },
    failure: "status",
    cost: 1,
    failedAuth: 1,
    needs: ["otherEnvKey"],
    async run(t: CheckContext) {
      const key = t.inputs.otherEnvApiKey!;
      const ex = await t.get(PRODUCTS_PATH, { key });
      t.expectRefused(ex, "the other environment's key", { status: 401, code: "wrong_environment" });
      if (t.reference) {
        const keyEnvironment = key.startsWith("ypk_live_")
          ? "production"
          : key.startsWith("ypk_test_")
            ? "sandbox"
            : undefined;
        const body = t.json(ex) as { detail?: unknown };
        if (keyEnvironment !== undefined) {
          t.checkWith(
            "value",
            typeof body.detail === "string" && body.detail.includes(keyEnvironment),
            `the detail should name the key's environment "${keyEnvironment}", got ${JSON.stringify(body.detail)}`,
            ex,
          );
        }
      }
    },
  },
  {
    id: "AUTH-04",
    kind: "scenario",
    title: "A bad key is refused before the parameters and body are looked at",
    category: "auth",
    level: "reference",
    cites: [
      contract("§5", "Order of checks, first failure wins: authentication (401) → rate limit (429) →"),
      decision(
        "Order of checks on GET endpoints (§3, §5)",
        "routing (404/405) → authentication (401, or 429 past the failed-authentication limit) → rate limit (429) → product (404) → query parameters (400) → product state (409) → answer.",
      ),
    ],
    failure: "status",
    cost: 3,
    failedAuth: 3,
    async run(t: CheckContext) {
      const product = t.product((p) => p.status === "active", "active product");
      const badAmount = await t.get(yieldPath(product.slug, "not-a-number"), { key: unknownApiKey(t) });
      t.expectRefused(badAmount, "an unknown key with a malformed amount", {
        status: 401,
        code: "invalid_api_key",
      });
      const badSlug = await t.get(productPath("conformance-no-such-product"), { key: unknownApiKey(t, 140) });
      t.expectRefused(badSlug, "an unknown key with an unknown slug", {
        status: 401,
        code: "invalid_api_key",
      });
      const badBody = await t.postEvent({
        body: "not json",
        key: null,
        contentType: "text/plain",
        signature: "none",
      });
      t.expectRefused(badBody, "an event without a key, with a bad body", {
        status: 401,
        code: "missing_api_key",
      });
    },
  },
  {
    id: "AUTH-05",
    kind: "scenario",
    title: "Every endpoint requires the API key",
    category: "auth",
    level: "spec",
    cites: [REQUIRED],
    tolerates: [GAPS.statusCodes],
    reference: { asserts: "401 missing_api_key on each", cites: [INVALID] },
    failure: "status",
    cost: 4,
    failedAuth: 4,
    async run(t: CheckContext) {
      const slug = t.products()[0]!.slug;
      const wallet = t.randomWallet();
      const requests: Array<[string, () => ReturnType<CheckContext["get"]>]> = [
        ["GET a product", () => t.get(productPath(slug), { key: null })],
        ["GET a position", () => t.get(positionPath(slug, wallet), { key: null })],
        ["GET a yield calculation", () => t.get(yieldPath(slug, "1"), { key: null })],
        ["POST an event", () => t.postEvent({ body: t.newEvent(), key: null, signature: "none" })],
      ];
      for (const [what, send] of requests) {
        const ex = await send();
        t.expectRefused(ex, `${what} without a key`, { status: 401, code: "missing_api_key" });
      }
    },
  },
  {
    id: "AUTH-06",
    kind: "scenario",
    title: "A revoked API key is refused",
    category: "auth",
    level: "reference",
    cites: [INVALID],
    failure: "status",
    cost: 1,
    failedAuth: 1,
    needs: ["revokedKey"],
    async run(t: CheckContext) {
      const ex = await t.get(PRODUCTS_PATH, { key: t.inputs.revokedApiKey! });
      t.expectRefused(ex, "GET products with a revoked key", { status: 401, code: "invalid_api_key" });
    },
  },
];
