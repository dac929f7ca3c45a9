/** `GET /products/{slug}` (CONTRACT §8): one product of the caller, with its latest metrics. */
import { type AnyAnswer, awaits } from "../../stores/maybe-promise.js";
import { findProduct, productOrNotFound } from "../find-product.js";
import type { PartnerHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const getProduct: PartnerHandler = async ({ partner, params }, deps) => {
  const found = findProduct(deps.products, partner, params["slug"]);
  const product = productOrNotFound(awaits(found, (found as AnyAnswer)?.then) ? await found : found);
  return okReply(deps.productAnswer(product, partner.name));
};
