/**
 * The deployment's fixture data, when QA has it (`--fixtures DIR`; the embedded server's own by
 * default): the reference POS-09 recomputes positions from, read and checked by the harness itself
 * (not by the core's loader), reduced to what the position math needs.
 * @module
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config.js";
import { fromBaseUnits } from "./decimal.js";
import { convertedAssets, usdValue } from "./position.js";

/** The four files of a fixture directory. */
export const FIXTURE_FILE_NAMES = ["partners.json", "products.json", "vaults.json", "prices.json"] as const;
export type FixtureFileName = (typeof FIXTURE_FILE_NAMES)[number];

/** A product as the fixtures hold it: the fields the position math needs. */
export interface FixtureProduct {
  readonly partnerId: string;
  readonly slug: string;
  readonly chainId: number;
  readonly wrapperAddress: string;
  readonly assetAddress: string;
  readonly assetSymbol: string;
  readonly assetDecimals: number;
  /** δ: shares have assetDecimals + δ decimals (CONTRACT §2). */
  readonly decimalsOffset: number;
}

interface Vault {
  readonly totalAssets: bigint;
  readonly totalSupply: bigint;
  /** Lower-case wallet → shares. */
  readonly holdings: ReadonlyMap<string, bigint>;
}

/** Fixture data reduced to what the position math needs. */
export interface ReferenceFixtures {
  /** Where it came from, for messages. */
  readonly source: string;
  readonly products: readonly FixtureProduct[];
  /** `chainId:lower-case address` → vault (by wrapper) and USD price as written (by asset). */
  readonly vaults: ReadonlyMap<string, Vault>;
  readonly prices: ReadonlyMap<string, string>;
  /** SHA-256 key hash (hex) → partner id. */
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

/** Reads a field, or throws saying which file and row lacks it. */
function field<T>(
  row: unknown,
  name: string,
  where: string,
  type: "string" | "integer" | "object" | "array",
): T {
  const value = typeof row === "object" && row !== null ? (row as Record<string, unknown>)[name] : undefined;
  const ok =
    type === "integer"
      ? Number.isInteger(value)
      : type === "array"
        ? Array.isArray(value)
        : type === "object"
          ? typeof value === "object" && value !== null && !Array.isArray(value)
          : typeof value === type;
  if (!ok)
    throw new ConfigError(
      `--fixtures: ${where}: "${name}" should be ${type === "integer" ? "an integer" : `a ${type}`}`,
    );
  return value as T;
}

function integerText(text: string, where: string): bigint {
  if (!/^[0-9]+$/.test(text))
    throw new ConfigError(`--fixtures: ${where}: ${JSON.stringify(text)} is not a whole number`);
  return BigInt(text);
}

function rows(files: Readonly<Record<FixtureFileName, unknown>>, name: FixtureFileName): unknown[] {
  const value = files[name];
  if (!Array.isArray(value)) throw new ConfigError(`--fixtures: ${name} should hold a JSON array`);
  return value;
}

/** Reduces the four fixture files (already parsed) to what POS-09 needs. Throws ConfigError. */
export function referenceFixtures(
  files: Readonly<Record<FixtureFileName, unknown>>,
  source: string,
): ReferenceFixtures {
  const products = rows(files, "products.json").map((row, i): FixtureProduct => {
    const at = `products.json[${i}]`;
    return {
      partnerId: field(row, "partner_id", at, "string"),
      slug: field(row, "slug", at, "string"),
      chainId: field(row, "chain_id", at, "integer"),
      wrapperAddress: field(row, "wrapper_address", at, "string"),
      assetAddress: field(row, "asset_address", at, "string"),
      assetSymbol: field(row, "asset_symbol", at, "string"),
      assetDecimals: field(row, "asset_decimals", at, "integer"),
      decimalsOffset: field(row, "decimals_offset", at, "integer"),
    };
  });
  const vaults = new Map<string, Vault>();
  for (const [i, row] of rows(files, "vaults.json").entries()) {
    const at = `vaults.json[${i}]`;
    const holdings = new Map<string, bigint>();
    for (const [wallet, shares] of Object.entries(
      field<Record<string, unknown>>(row, "holdings", at, "object"),
    )) {
      if (typeof shares !== "string")
        throw new ConfigError(`--fixtures: ${at}.holdings: shares should be strings`);
      holdings.set(wallet.toLowerCase(), integerText(shares, `${at}.holdings`));
    }
    vaults.set(key(field(row, "chain_id", at, "integer"), field(row, "wrapper_address", at, "string")), {
      totalAssets: integerText(field(row, "total_assets", at, "string"), at),
      totalSupply: integerText(field(row, "total_supply", at, "string"), at),
      holdings,
    });
  }
  const prices = new Map<string, string>();
  for (const [i, row] of rows(files, "prices.json").entries()) {
    const at = `prices.json[${i}]`;
    const price = field<string>(row, "usd_price", at, "string");
    if (!/^[0-9]+(\.[0-9]+)?$/.test(price))
      throw new ConfigError(`--fixtures: ${at}: ${price} is not a price`);
    prices.set(key(field(row, "chain_id", at, "integer"), field(row, "asset_address", at, "string")), price);
  }
  const keyOwners = new Map<string, string>();
  for (const [i, partner] of rows(files, "partners.json").entries()) {
    const at = `partners.json[${i}]`;
    const id = field<string>(partner, "id", at, "string");
    for (const k of field<unknown[]>(partner, "api_keys", at, "array"))
      keyOwners.set(field(k, "key_hash", `${at}.api_keys`, "string"), id);
  }
  return { source, products, vaults, prices, keyOwners };
}

/** Reads `--fixtures DIR`. Throws ConfigError naming the file at fault. */
export function loadReferenceFixtures(dir: string): ReferenceFixtures {
  const files = {} as Record<FixtureFileName, unknown>;
  for (const name of FIXTURE_FILE_NAMES) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), "utf8");
    } catch (error) {
      const reason =
        (error as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : (error as Error).message;
      throw new ConfigError(
        `--fixtures ${dir}: ${name}: ${reason} (expects ${FIXTURE_FILE_NAMES.join(", ")})`,
      );
    }
    try {
      files[name] = JSON.parse(text);
    } catch (error) {
      throw new ConfigError(`--fixtures ${dir}: ${name} is not JSON: ${(error as Error).message}`);
    }
  }
  return referenceFixtures(files, dir);
}

/** The fixture products of the partner that holds `apiKey` (CONTRACT §4: keys stored as SHA-256). */
export function productsOfKey(
  fixtures: ReferenceFixtures,
  apiKey: string,
): readonly FixtureProduct[] | undefined {
  const partner = fixtures.keyOwners.get(createHash("sha256").update(apiKey).digest("hex"));
  return partner === undefined ? undefined : fixtures.products.filter((p) => p.partnerId === partner);
}

/** shares, assets = convertToAssets(shares) and usd_value = floor(assets × price) at 2 digits. */
export function expectedPosition(
  fixtures: ReferenceFixtures,
  product: FixtureProduct,
  wallet: string,
): ExpectedPosition {
  const vault = fixtures.vaults.get(key(product.chainId, product.wrapperAddress));
  const shares = vault?.holdings.get(wallet.toLowerCase()) ?? 0n;
  const assets =
    vault === undefined || shares === 0n
      ? 0n
      : convertedAssets(shares, vault.totalAssets, vault.totalSupply, product.decimalsOffset);
  const price = fixtures.prices.get(key(product.chainId, product.assetAddress));
  return {
    shares: fromBaseUnits(shares, product.assetDecimals + product.decimalsOffset),
    assets: fromBaseUnits(assets, product.assetDecimals),
    usd_value:
      assets === 0n ? "0" : price === undefined ? undefined : usdValue(assets, product.assetDecimals, price),
  };
}
