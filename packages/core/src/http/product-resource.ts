/**
 * A product on the wire (CONTRACT §8): every field present, amounts and rates as canonical
 * decimals, net APY from the fee formula of CONTRACT §2.
 * @module
 */
import { formatUnits } from "../math/decimal.js";
import { netApy, RATE_DECIMALS } from "../math/yield-math.js";
import type { ProductRecord } from "../stores/product-source.js";
import type { Product } from "./schemas.js";

/**
 * @example toProductResource(record).latest_metrics?.net_apy_for_user; // "0.0518"
 */
export function toProductResource(record: ProductRecord): Product {
  const m = record.metrics;
  return {
    slug: record.slug,
    partner: record.partnerName,
    chain: record.chain,
    chain_id: record.chainId,
    wrapper_address: record.wrapperAddress,
    asset_symbol: record.assetSymbol,
    status: record.status,
    underlying_vault_address: record.underlyingVaultAddress,
    asset_address: record.assetAddress,
    asset_decimals: record.assetDecimals,
    service_fee_bps: record.serviceFeeBps,
    partner_fee_bps: record.partnerFeeBps,
    display_name: record.displayName,
    description: record.description,
    latest_metrics:
      m === null
        ? null
        : {
            as_of_date: m.asOfDate,
            wrapper_total_assets: formatUnits(m.wrapperTotalAssets, record.assetDecimals),
            underlying_apy: formatUnits(m.underlyingApyWad, RATE_DECIMALS),
            net_apy_for_user: formatUnits(
              netApy(m.underlyingApyWad, record.serviceFeeBps, record.partnerFeeBps),
              RATE_DECIMALS,
            ),
          },
  };
}

/** A product's wire forms, each built once per record (records are immutable). */
export interface ProductJsonCache {
  /** The product resource as JSON (the list endpoint joins these). */
  json(record: ProductRecord): string;
  /** The whole answer of `GET /products/{slug}`: `{"success":true,"data":…}`. */
  answer(record: ProductRecord): string;
}

/**
 * @example const cache = productJsonCache(); cache.json(record) === cache.json(record); // true, serialised once
 */
export function productJsonCache(): ProductJsonCache {
  const jsons = new WeakMap<ProductRecord, string>();
  const answers = new WeakMap<ProductRecord, string>();
  const json = (record: ProductRecord): string => {
    let text = jsons.get(record);
    if (text === undefined) {
      text = JSON.stringify(toProductResource(record));
      jsons.set(record, text);
    }
    return text;
  };
  return {
    json,
    answer(record) {
      // Kept whole: concatenated per request, the ~700-byte string would be built and then
      // flattened again for every answer.
      let text = answers.get(record);
      if (text === undefined) {
        text = `{"success":true,"data":${json(record)}}`;
        answers.set(record, text);
      }
      return text;
    },
  };
}
