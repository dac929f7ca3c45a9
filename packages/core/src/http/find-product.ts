/**
 * The product a path's slug names, for the calling partner only (CONTRACT §3): another partner's
 * slug is indistinguishable from an unknown one (never 403), and a slug outside the pattern never
 * reaches the product source.
 * @module
 */
import type { Partner } from "../stores/partner-store.js";
import type { ProductRecord, ProductSource } from "../stores/product-source.js";
import { ApiError } from "./errors.js";
import { SLUG_PATTERN } from "./schemas.js";

/**
 * @throws ApiError `product_not_found` (404).
 */
export async function findProduct(
  products: ProductSource,
  partner: Partner,
  slug: string | undefined,
): Promise<ProductRecord> {
  const product =
    slug !== undefined && SLUG_PATTERN.test(slug) ? await products.getProduct(partner.id, slug) : undefined;
  if (product === undefined) throw new ApiError("product_not_found", "no product with this slug");
  return product;
}
