/** `GET /products/{slug}` (CONTRACT §8): one product of the caller, with its latest metrics. */
import { isPromiseLike } from "../../stores/maybe-promise.js";
import { findProduct, productOrNotFound } from "../find-product.js";
import type { PartnerHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const getProduct: PartnerHandler = async ({ partner, params }, deps) => {
  let found = findProduct(deps.products, partner, params["slug"]);
  if (isPromiseLike(found)) found = await found;
  const product = productOrNotFound(found);
  return okReply(deps.productAnswer(product));
};
