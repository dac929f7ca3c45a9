/** `GET /products` (CONTRACT §8): every product of the caller, every status, ordered by slug. */
import { isPromiseLike } from "../../stores/maybe-promise.js";
import type { PartnerHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const listProducts: PartnerHandler = async ({ partner }, deps) => {
  let products = deps.products.listProducts(partner.id);
  if (isPromiseLike(products)) products = await products;
  return okReply(`{"success":true,"data":[${products.map(deps.productJson).join(",")}]}`);
};
