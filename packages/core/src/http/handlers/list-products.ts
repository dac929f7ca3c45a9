/** `GET /products` (CONTRACT §8): every product of the caller, every status, ordered by slug. */
import { type AnyAnswer, awaits } from "../../stores/maybe-promise.js";
import type { PartnerHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const listProducts: PartnerHandler = async ({ partner }, deps) => {
  const listed = deps.products.listProducts(partner.id);
  const products = awaits(listed, (listed as AnyAnswer)?.then) ? await listed : listed;
  const name = partner.name;
  return okReply(`{"success":true,"data":[${products.map((p) => deps.productJson(p, name)).join(",")}]}`);
};
