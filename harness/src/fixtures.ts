/**
 * The deployment's fixture data, when QA has it (`--fixtures DIR`; the embedded server's own by
 * default): the reference the position math is recomputed from (POS-09), independently of the
 * server's stores: ERC-4626 `convertToAssets` over the vault totals and `usdValueCents` over the
 * price, both from the core.
 * @module
 */
import {
  FIXTURE_FILES,
  type FixtureFileName,
  hashApiKey,
  loadFixtures,
  type ProductRecord,
} from "@partner-yield/core";
import {
  convertToAssets,
  formatUnits,
  parseDecimal,
  RATE_DECIMALS,
  unwrap,
  usdValueCents,
} from "@partner-yield/core/math";
import { ConfigError } from "./config.js";

interface VaultRow {
  readonly totalAssets: bigint;
  readonly totalSupply: bigint;
  /** Lower-case wallet → shares. */
  readonly holdings: ReadonlyMap<string, bigint>;
}

/** Fixture data reduced to what the position math needs. */
export interface ReferenceFixtures {
  /** Where it came from, for messages. */
  readonly source: string;
  readonly products: readonly ProductRecord[];
  /** `chainId:lower-case address` → vault (by wrapper) and USD price WAD (by asset). */
  readonly vaults: ReadonlyMap<string, VaultRow>;
  readonly prices: ReadonlyMap<string, bigint>;
  /** SHA-256 key hash → partner id. */
  readonly keyOwners: ReadonlyMap<string, string>;
}

/** What a position should read, as the canonical decimals of the response. */
export interface ExpectedPosition {
  readonly shares: string;
  readonly assets: string;
  /** Undefined when the assets are positive and the fixtures hold no price for the asset. */
  readonly usd_value: string | undefined;
}

const key = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;

/** Validates the four fixture files (core `loadFixtures`) and keeps the numbers POS-09 needs. */
export function referenceFixtures(
  files: Readonly<Record<FixtureFileName, unknown>>,
  source: string,
): ReferenceFixtures {
  let data: ReturnType<typeof loadFixtures>;
  try {
    data = loadFixtures(files, { dir: source });
  } catch (error) {
    throw new ConfigError(`--fixtures: ${(error as Error).message}`);
  }
  type Raw = Array<Record<string, unknown>>;
  const vaults = new Map<string, VaultRow>();
  for (const row of files["vaults.json"] as Raw) {
    const holdings = new Map<string, bigint>();
    for (const [wallet, shares] of Object.entries(row["holdings"] as Record<string, string>))
      holdings.set(wallet.toLowerCase(), BigInt(shares));
    vaults.set(key(row["chain_id"] as number, row["wrapper_address"] as string), {
      totalAssets: BigInt(row["total_assets"] as string),
      totalSupply: BigInt(row["total_supply"] as string),
      holdings,
    });
  }
  const prices = new Map<string, bigint>();
  for (const row of files["prices.json"] as Raw)
    prices.set(
      key(row["chain_id"] as number, row["asset_address"] as string),
      unwrap(parseDecimal(row["usd_price"] as string, RATE_DECIMALS)),
    );
  const keyOwners = new Map<string, string>();
  for (const partner of files["partners.json"] as Raw)
    for (const k of partner["api_keys"] as Array<{ key_hash: string }>)
      keyOwners.set(k.key_hash, partner["id"] as string);
  return { source, products: data.productRecords, vaults, prices, keyOwners };
}

/** Reads `--fixtures DIR` with the node-adapter's reader. Throws ConfigError. */
export async function loadReferenceFixtures(dir: string): Promise<ReferenceFixtures> {
  let adapter: typeof import("@partner-yield/node-adapter");
  try {
    adapter = await import("@partner-yield/node-adapter");
  } catch (error) {
    throw new ConfigError(`--fixtures needs @partner-yield/node-adapter: ${(error as Error).message}`);
  }
  let files: Record<FixtureFileName, unknown>;
  try {
    files = adapter.readFixtureDir(dir);
  } catch (error) {
    throw new ConfigError(
      `--fixtures ${dir}: ${(error as Error).message} (expects ${FIXTURE_FILES.join(", ")})`,
    );
  }
  return referenceFixtures(files, dir);
}

/** The fixture products of the partner that holds `apiKey`; undefined when no partner holds it. */
export function productsOfKey(
  fixtures: ReferenceFixtures,
  apiKey: string,
): readonly ProductRecord[] | undefined {
  const partner = fixtures.keyOwners.get(hashApiKey(apiKey));
  return partner === undefined ? undefined : fixtures.products.filter((p) => p.partnerId === partner);
}

/** shares, assets = convertToAssets(shares) and usd_value = floor(assets × price) at 2 digits. */
export function expectedPosition(
  fixtures: ReferenceFixtures,
  product: ProductRecord,
  wallet: string,
): ExpectedPosition {
  const vault = fixtures.vaults.get(key(product.chainId, product.wrapperAddress));
  const shares = vault?.holdings.get(wallet.toLowerCase()) ?? 0n;
  const assets =
    vault === undefined || shares === 0n
      ? 0n
      : convertToAssets(shares, vault.totalAssets, vault.totalSupply, product.decimalsOffset);
  const price = fixtures.prices.get(key(product.chainId, product.assetAddress));
  const usd =
    assets === 0n
      ? 0n
      : price === undefined
        ? undefined
        : usdValueCents(assets, product.assetDecimals, price);
  return {
    shares: formatUnits(shares, product.assetDecimals + product.decimalsOffset),
    assets: formatUnits(assets, product.assetDecimals),
    usd_value: usd === undefined ? undefined : formatUnits(usd, 2),
  };
}
