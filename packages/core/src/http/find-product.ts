/**
 * The product a path's slug names, for the calling partner only (CONTRACT §3): another partner's
 * slug is indistinguishable from an unknown one (never 403), and a slug outside the pattern never
 * reaches the product source.
 * @module
 */
import type { MaybePromise } from "../stores/maybe-promise.js";
import type { Partner } from "../stores/partner-store.js";
import type { ProductRecord, ProductSource } from "../stores/product-source.js";
import { ApiError } from "./errors.js";
import { SLUG_PATTERN } from "./schemas.js";

/**
 * The product, or undefined, as the source answers: at once, or a promise to await only when it is
 * one (`awaits`); pass the product to `productOrNotFound`. Not an async function: a GET of a
 * product answered at once then waits for nothing (docs/performance.md).
 * @example
 * const found = findProduct(deps.products, partner, params["slug"]);
 * const product = productOrNotFound(awaits(found, (found as AnyAnswer)?.then) ? await found : found);
 */
export function findProduct(
  products: ProductSource,
  partner: Partner,
  slug: string | undefined,
): MaybePromise<ProductRecord | undefined> {
  return slug !== undefined && SLUG_PATTERN.test(slug) ? products.getProduct(partner.id, slug) : undefined;
}

/**
 * @throws ApiError `product_not_found` (404) when there is no product.
 */
export function productOrNotFound(product: ProductRecord | undefined): ProductRecord {
  if (product === undefined) throw new ApiError("product_not_found", "no product with this slug");
  return product;
}
