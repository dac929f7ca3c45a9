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
 * `partnerName`: the partner's name as the partner store holds it (the product names its partner
 * by id only).
 * @example toProductResource(record, partner.name).latest_metrics?.net_apy_for_user; // "0.0518"
 */
export function toProductResource(record: ProductRecord, partnerName: string): Product {
  const m = record.metrics;
  return {
    slug: record.slug,
    partner: partnerName,
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

/**
 * A product's wire forms, each built once per record (records are immutable) and partner name
 * (built again when the partner store answers with another name: a rename).
 */
export interface ProductJsonCache {
  /** The product resource as JSON (the list endpoint joins these). */
  json(record: ProductRecord, partnerName: string): string;
  /** The whole answer of `GET /products/{slug}`: `{"success":true,"data":…}`. */
  answer(record: ProductRecord, partnerName: string): string;
}

/** A wire form and the partner name it was built with. */
interface Built {
  readonly partnerName: string;
  readonly text: string;
}

/**
 * @example const cache = productJsonCache(); cache.json(record, name) === cache.json(record, name); // true, serialised once
 */
export function productJsonCache(): ProductJsonCache {
  const jsons = new WeakMap<ProductRecord, Built>();
  const answers = new WeakMap<ProductRecord, Built>();
  const json = (record: ProductRecord, partnerName: string): string => {
    let built = jsons.get(record);
    if (built === undefined || built.partnerName !== partnerName) {
      built = { partnerName, text: JSON.stringify(toProductResource(record, partnerName)) };
      jsons.set(record, built);
    }
    return built.text;
  };
  return {
    json,
    answer(record, partnerName) {
      // Kept whole: concatenated per request, the ~700-byte string would be built and then
      // flattened again for every answer.
      let built = answers.get(record);
      if (built === undefined || built.partnerName !== partnerName) {
        built = { partnerName, text: `{"success":true,"data":${json(record, partnerName)}}` };
        answers.set(record, built);
      }
      return built.text;
    },
  };
}
