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

/**
 * A serialiser that writes each record once: records are immutable, and the list and get
 * endpoints then only concatenate.
 * @example const json = productJsonCache(); json(record) === json(record); // true, serialised once
 */
export function productJsonCache(): (record: ProductRecord) => string {
  const cache = new WeakMap<ProductRecord, string>();
  return (record) => {
    let json = cache.get(record);
    if (json === undefined) {
      json = JSON.stringify(toProductResource(record));
      cache.set(record, json);
    }
    return json;
  };
}
