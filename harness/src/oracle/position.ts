/**
 * The expected position of CONTRACT §2, by the harness's own route: ERC-4626 `convertToAssets`
 * with OpenZeppelin's virtual shares, and the USD value from the price as written (its own
 * digits, no 10^18 fixed point).
 * @module
 */
import { floorQuotient, fromBaseUnits } from "./decimal.js";

/**
 * assets = floor(shares × (totalAssets + 1) / (totalSupply + 10^δ)), in base units.
 * @example convertedAssets(1500250000000000000000n, 12345678901234n, 11900000000000000000000000n, 12); // 1556437375n
 */
export function convertedAssets(
  shares: bigint,
  totalAssets: bigint,
  totalSupply: bigint,
  decimalsOffset: number,
): bigint {
  if (shares < 0n || totalAssets < 0n || totalSupply < 0n) throw new RangeError("negative vault quantity");
  return (shares * (totalAssets + 1n)) / (totalSupply + 10n ** BigInt(decimalsOffset));
}

/**
 * usd_value = floor(assets × price) at 2 digits, with the price as decimal text ("0.9998").
 * @example usdValue(1556437375n, 6, "0.9998"); // "1556.12"
 */
export function usdValue(assets: bigint, assetDecimals: number, price: string): string {
  const match = /^([0-9]+)(?:\.([0-9]+))?$/.exec(price);
  if (match === null) throw new RangeError(`not a price: ${JSON.stringify(price)}`);
  const fraction = match[2] ?? "";
  const priceUnits = BigInt(match[1]! + fraction);
  const cents = floorQuotient(
    assets * priceUnits * 100n,
    10n ** BigInt(assetDecimals) * 10n ** BigInt(fraction.length),
  );
  return fromBaseUnits(cents, 2);
}
