/**
 * `GET /products/{slug}/yield-calc?amount=` (CONTRACT §2, §3): annual and compound-monthly yield
 * of an amount at the product's net APY. Input errors come before state errors
 * (docs/contract.md): a bad amount on a paused product is 400, not 409.
 */
import { parseAmount } from "../../math/decimal.js";
import { quoteYield, type YieldQuote } from "../../math/yield-math.js";
import { type AnyAnswer, awaits } from "../../stores/maybe-promise.js";
import { ApiError } from "../errors.js";
import { findProduct, productOrNotFound } from "../find-product.js";
import type { PartnerHandler } from "../handler.js";
import { queryError, queryParam } from "../query.js";
import { okReply } from "../reply.js";

export const calculateYield: PartnerHandler = async ({ request, partner, params }, deps) => {
  const found = findProduct(deps.products, partner, params["slug"]);
  const product = productOrNotFound(awaits(found, (found as AnyAnswer)?.then) ? await found : found);
  const raw = queryParam(request.query, "amount");
  if (raw === undefined)
    throw queryError("invalid_amount", "amount", "the amount query parameter is required");
  const amount = parseAmount(raw, product.assetDecimals, product.assetSymbol);
  if (!amount.ok) throw queryError("invalid_amount", "amount", amount.reason);
  if (product.status !== "active") {
    throw new ApiError(
      "product_not_active",
      `product is ${product.status}; yield is quoted for active products only`,
    );
  }
  if (product.metrics === null) throw new ApiError("metrics_unavailable", "product has no metrics yet");
  const data = quoteYield({
    amountUnits: amount.value,
    assetDecimals: product.assetDecimals,
    underlyingApyWad: product.metrics.underlyingApyWad,
    serviceFeeBps: product.serviceFeeBps,
    partnerFeeBps: product.partnerFeeBps,
  });
  return okReply(quoteBody(data));
};

/**
 * The answer's body exactly as `JSON.stringify({ success: true, data })` writes it (same keys,
 * same order), without walking the object: every field of a quote is a canonical decimal (digits,
 * `.`, `-`), which JSON writes as it is between quotes (test: the same text for any quote).
 * @example quoteBody({ principal: "1000", annual_yield: "45", monthly_yield: "3.674809", net_apy_for_user: "0.045" }); // '{"success":true,"data":{"principal":"1000",…,"net_apy_for_user":"0.045"}}'
 */
export function quoteBody(data: YieldQuote): string {
  return `{"success":true,"data":{"principal":"${data.principal}","annual_yield":"${data.annual_yield}","monthly_yield":"${data.monthly_yield}","net_apy_for_user":"${data.net_apy_for_user}"}}`;
}
