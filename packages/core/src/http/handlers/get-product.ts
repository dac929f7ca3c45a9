/** `GET /products/{slug}` (CONTRACT §8): one product of the caller, with its latest metrics. */
import { findProduct, productOrNotFound } from "../find-product.js";
import type { PartnerHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const getProduct: PartnerHandler = async ({ partner, params }, deps) => {
  const product = productOrNotFound(await findProduct(deps.products, partner, params["slug"]));
  return okReply(deps.productAnswer(product));
};
