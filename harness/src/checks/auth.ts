/**
 * Authentication (interface.md §4–§5, CONTRACT §4): every endpoint needs a key of this
 * environment, and a bad key is refused before anything else is looked at.
 * @module
 */
import { generateApiKey } from "@partner-yield/core";
import { type CheckContext, PRODUCTS_PATH, positionPath, productPath, yieldPath } from "./context.js";
import type { CheckDefinition } from "./types.js";

/** A slug no target holds, seeded. */
export function missingSlug(t: CheckContext, salt = 0): string {
  const hex = [...t.randomBytes(6, salt)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `conformance-missing-${hex}`;
}

/** A well-formed key (prefix, base62, valid checksum) that no partner holds. */
export function unknownApiKey(t: CheckContext): string {
  const environment = t.inputs.environment ?? "sandbox";
  let salt = 100;
  return generateApiKey(environment, (n) => t.randomBytes(n, salt++));
}

export const AUTH_CHECKS: readonly CheckDefinition[] = [
  {
    id: "AUTH-01",
    title: "A request without X-Api-Key is refused",
    category: "auth",
    level: "spec",
    source: "interface.md §4, §5.1",
    reference: "401 missing_api_key (CONTRACT §4)",
    cost: 1,
    failedAuth: 1,
    async run(t: CheckContext) {
      const ex = await t.get(PRODUCTS_PATH, { key: null });
      t.expectRefused(ex, "GET products without a key", { status: 401, code: "missing_api_key" });
    },
  },
  {
    id: "AUTH-02",
    title: "An unknown or malformed API key is refused",
    category: "auth",
    level: "spec",
    source: "interface.md §5.1",
    reference: "401 invalid_api_key for both (CONTRACT §4)",
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
    title: "A key of the other environment is refused",
    category: "auth",
    level: "spec",
    source: "interface.md §5.2",
    reference: "401 wrong_environment, and the detail names the key's environment (CONTRACT §4)",
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
          t.check(
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
    title: "A bad key is refused before the parameters and body are looked at",
    category: "auth",
    level: "reference",
    source: "CONTRACT §4, §5 (order of checks)",
    cost: 3,
    failedAuth: 3,
    async run(t: CheckContext) {
      const product = t.product((p) => p.status === "active", "active product");
      const badAmount = await t.get(yieldPath(product.slug, "not-a-number"), { key: unknownApiKey(t) });
      t.expectRefused(badAmount, "an unknown key with a malformed amount", {
        status: 401,
        code: "invalid_api_key",
      });
      const badSlug = await t.get(productPath("conformance-no-such-product"), { key: unknownApiKey(t) });
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
    title: "Every endpoint requires the API key",
    category: "auth",
    level: "spec",
    source: "interface.md §4",
    reference: "401 missing_api_key on each (CONTRACT §4)",
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
    title: "A revoked API key is refused",
    category: "auth",
    level: "reference",
    source: "CONTRACT §4 (revoked → 401 invalid_api_key)",
    cost: 1,
    failedAuth: 1,
    needs: ["revokedKey"],
    async run(t: CheckContext) {
      const ex = await t.get(PRODUCTS_PATH, { key: t.inputs.revokedApiKey! });
      t.expectRefused(ex, "GET products with a revoked key", { status: 401, code: "invalid_api_key" });
    },
  },
];
