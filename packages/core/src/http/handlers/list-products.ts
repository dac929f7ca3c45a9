/** `GET /products` (CONTRACT §8): every product of the caller, every status, ordered by slug. */
import { type AnyAnswer, awaits } from "../../stores/maybe-promise.js";
import type { PartnerHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const listProducts: PartnerHandler = async ({ partner }, deps) => {
  const listed = deps.products.listProducts(partner.id);
  const products = awaits(listed, (listed as AnyAnswer)?.then) ? await listed : listed;
  return okReply(`{"success":true,"data":[${products.map(deps.productJson).join(",")}]}`);
};
