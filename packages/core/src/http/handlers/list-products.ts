/** `GET /products` (CONTRACT §8): every product of the caller, every status, ordered by slug. */
import type { PartnerHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const listProducts: PartnerHandler = async ({ partner }, deps) => {
  const products = await deps.products.listProducts(partner.id);
  return okReply(`{"success":true,"data":[${products.map(deps.productJson).join(",")}]}`);
};
