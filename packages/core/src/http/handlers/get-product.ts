/** `GET /products/{slug}` (CONTRACT §8): one product of the caller, with its latest metrics. */
import { findProduct, findProductNow, productOrNotFound } from "../find-product.js";
import type { PartnerHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const getProduct: PartnerHandler = async ({ partner, params }, deps) => {
  const product = productOrNotFound(
    findProductNow(deps, partner, params["slug"]) ??
      (await findProduct(deps.products, partner, params["slug"])),
  );
  return okReply(deps.productAnswer(product));
};
