/**
 * The product a path's slug names, for the calling partner only (CONTRACT §3): another partner's
 * slug is indistinguishable from an unknown one (never 403), and a slug outside the pattern never
 * reaches the product source.
 * @module
 */
import type { MaybePromise } from "../stores/maybe-promise.js";
import type { Partner } from "../stores/partner-store.js";
import type { ProductRecord, ProductSource } from "../stores/product-source.js";
import type { ApiDependencies } from "./dependencies.js";
import { ApiError } from "./errors.js";
import { SLUG_PATTERN } from "./schemas.js";

const NONE: Promise<undefined> = Promise.resolve(undefined);

/**
 * The product, or undefined; pass the result to `productOrNotFound`. Not an async function: a GET
 * of a product then costs one suspended frame fewer (docs/performance.md).
 * @example const product = productOrNotFound(await findProduct(deps.products, partner, params["slug"]));
 */
export function findProduct(
  products: ProductSource,
  partner: Partner,
  slug: string | undefined,
): MaybePromise<ProductRecord | undefined> {
  return slug !== undefined && SLUG_PATTERN.test(slug) ? products.getProduct(partner.id, slug) : NONE;
}

/**
 * The product at once when the source is the in-memory one (`deps.answerNow`), else undefined: a
 * product not found this way is asked of `findProduct`, which answers for every source.
 * @example const product = productOrNotFound(findProductNow(deps, partner, slug) ?? (await findProduct(deps.products, partner, slug)));
 */
export function findProductNow(
  deps: Pick<ApiDependencies, "answerNow">,
  partner: Partner,
  slug: string | undefined,
): ProductRecord | undefined {
  const now = deps.answerNow.getProduct;
  return now !== undefined && slug !== undefined && SLUG_PATTERN.test(slug)
    ? now(partner.id, slug)
    : undefined;
}

/**
 * @throws ApiError `product_not_found` (404) when there is no product.
 */
export function productOrNotFound(product: ProductRecord | undefined): ProductRecord {
  if (product === undefined) throw new ApiError("product_not_found", "no product with this slug");
  return product;
}
