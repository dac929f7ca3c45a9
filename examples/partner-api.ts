/**
 * The team's own data (docs/data.md): one partner, one key (stored as its SHA-256 only), one signing
 * secret, one product with its vault and price. Every example mounts an API built here. JSON
 * imports with `type: "json"` work alike in Node, Bun, Deno and the bundlers of edge runtimes.
 */
import { createPartnerApi, loadFixtures, type PartnerApi, type PartnerApiOptions } from "@partner-yield/core";
import partners from "./data/partners.json" with { type: "json" };
import prices from "./data/prices.json" with { type: "json" };
import products from "./data/products.json" with { type: "json" };
import vaults from "./data/vaults.json" with { type: "json" };

/** Where the API answers; each framework routes this prefix to it. */
export const BASE_PATH = "/api/partner";

/** Validated once at start: a broken file fails here, naming the file and the field. */
const data = loadFixtures({
  "partners.json": partners,
  "products.json": products,
  "vaults.json": vaults,
  "prices.json": prices,
});

/** The sandbox API on the in-memory stores; `options` swaps in your own stores, limits or `basePath`. */
export function createAcmeApi(options: Partial<PartnerApiOptions> = {}): PartnerApi {
  return createPartnerApi({ environment: "sandbox", ...data, basePath: BASE_PATH, ...options });
}
