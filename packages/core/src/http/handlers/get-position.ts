/**
 * `GET /products/{slug}/position?address=` (CONTRACT §2, §3): a wallet's shares, the assets they
 * convert to and their USD value. The product is resolved before the address is validated; a
 * wallet with shares but no known USD price is a 503 (docs/contract.md), never a made-up value.
 */
import { parseAddress } from "../../evm/address.js";
import { formatUnits } from "../../math/decimal.js";
import { usdValueCents } from "../../math/yield-math.js";
import { type AnyAnswer, awaits } from "../../stores/maybe-promise.js";
import { StoreUnavailableError } from "../../stores/store-unavailable-error.js";
import { findProduct, productOrNotFound } from "../find-product.js";
import type { PartnerHandler } from "../handler.js";
import { queryError, queryParam } from "../query.js";
import { okReply } from "../reply.js";

/** Seconds a client waits before asking again for a position whose asset has no price. */
const MISSING_PRICE_RETRY_SECONDS = 60;

export const getPosition: PartnerHandler = async ({ request, partner, params }, deps) => {
  const found = findProduct(deps.products, partner, params["slug"]);
  const product = productOrNotFound(awaits(found, (found as AnyAnswer)?.then) ? await found : found);
  const raw = queryParam(request.query, "address");
  if (raw === undefined)
    throw queryError("invalid_address", "address", "the address query parameter is required");
  const address = parseAddress(raw);
  if (!address.ok) throw queryError("invalid_address", "address", address.reason);
  const held = deps.positions.getHolding(product, address.value);
  const holding = awaits(held, (held as AnyAnswer)?.then) ? await held : held;
  let usdCents = 0n;
  let price: bigint | undefined;
  if (holding.assets > 0n) {
    const priced = deps.prices.getUsdPriceWad(product);
    price = awaits(priced, (priced as AnyAnswer)?.then) ? await priced : priced;
    if (price === undefined) {
      throw new StoreUnavailableError(
        `no USD price is available for ${product.assetSymbol} (chain ${product.chainId}, asset ${product.assetAddress})`,
        MISSING_PRICE_RETRY_SECONDS,
      );
    }
    usdCents = usdValueCents(holding.assets, product.assetDecimals, price);
  }
  return okReply(
    positionBody({
      wallet_address: address.value,
      product_slug: product.slug,
      shares: formatUnits(holding.shares, product.assetDecimals + product.decimalsOffset),
      assets: formatUnits(holding.assets, product.assetDecimals),
      usd_value: formatUnits(usdCents, 2),
      ...(holding.vault === undefined
        ? {}
        : {
            vault: {
              decimals_offset: product.decimalsOffset,
              total_assets: holding.vault.totalAssets.toString(),
              total_supply: holding.vault.totalSupply.toString(),
              ...(price === undefined ? {} : { usd_price: formatUnits(price, 18) }),
            },
          }),
    }),
  );
};

/**
 * The audit view of a position (CONTRACT §2): the vault totals and the price the answer was
 * computed from, so that anyone can recompute `assets` and `usd_value` from the answer alone.
 */
export interface PositionVaultView {
  readonly decimals_offset: number;
  /** The vault's total assets, an integer in the asset's base units. */
  readonly total_assets: string;
  /** The vault's total share supply, an integer in share base units. */
  readonly total_supply: string;
  /** USD per whole unit of the asset; present when the value was priced (assets > 0). */
  readonly usd_price?: string;
}

/** The position answer's fields (CONTRACT §2): an EIP-55 address, the slug, three canonical decimals. */
export interface PositionData {
  readonly wallet_address: string;
  readonly product_slug: string;
  readonly shares: string;
  readonly assets: string;
  readonly usd_value: string;
  readonly vault?: PositionVaultView;
}

/**
 * The answer's body exactly as `JSON.stringify({ success: true, data })` writes it (same keys,
 * same order), without walking the object: the address (`0x` and hex digits) and the three
 * canonical decimals are written as they are between quotes; the slug, which comes from the
 * product data, goes through `JSON.stringify` (test: the same text for any position and slug).
 * @example positionBody({ wallet_address: "0x5aAe…BeAed", product_slug: "usdc-base-prime", shares: "1", assets: "1", usd_value: "1" }); // '{"success":true,"data":{"wallet_address":"0x5aAe…BeAed",…,"usd_value":"1"}}'
 */
export function positionBody(data: PositionData): string {
  const v = data.vault;
  const vault =
    v === undefined
      ? ""
      : `,"vault":{"decimals_offset":${v.decimals_offset},"total_assets":"${v.total_assets}","total_supply":"${v.total_supply}"${v.usd_price === undefined ? "" : `,"usd_price":"${v.usd_price}"`}}`;
  return `{"success":true,"data":{"wallet_address":"${data.wallet_address}","product_slug":${JSON.stringify(data.product_slug)},"shares":"${data.shares}","assets":"${data.assets}","usd_value":"${data.usd_value}"${vault}}}`;
}
