/**
 * The sandbox data set: fixture files (JSON, already parsed) validated with zod and turned into
 * the in-memory stores. A broken fixture fails loudly, naming the file and the field.
 * The core reads no files: an adapter reads them and passes their parsed contents.
 */
import { z } from "zod";
import { parseAddress } from "./address.js";
import { EVM_CHAINS } from "./chains.js";
import { parseDecimal } from "./decimal.js";
import { type ApiKeyRecord, MemoryKeyStore } from "./key-store.js";
import { MemoryPartnerStore, type Partner } from "./partner-store.js";
import { IsoDate, ProductStatus, SLUG_PATTERN } from "./schemas.js";
import {
  type AssetPrice,
  MemoryPositionSource,
  MemoryPriceSource,
  MemoryProductSource,
  type ProductRecord,
  type VaultState,
} from "./sources.js";
import { netApy, RATE_DECIMALS } from "./yield-math.js";

/** The file names an adapter must supply, in load order. */
export const FIXTURE_FILES = ["partners.json", "products.json", "vaults.json", "prices.json"] as const;
export type FixtureFileName = (typeof FIXTURE_FILES)[number];

/** A fixture that does not validate; `file` and `field` say where. */
export class FixtureError extends Error {
  override readonly name = "FixtureError";
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${file}: ${field === "" ? "(root)" : field}: ${reason}`);
  }
}

const BaseUnits = z.string().regex(/^(0|[1-9][0-9]*)$/, "must be a non-negative integer string (base units)");
/** Served as loaded, so normalised here: an all-lowercase or all-uppercase address becomes EIP-55. */
const Address = z.string().transform((value, ctx) => {
  const parsed = parseAddress(value);
  if (parsed.ok) return parsed.address;
  ctx.addIssue({ code: "custom", message: parsed.reason });
  return z.NEVER;
});
const Fraction = z
  .string()
  .regex(/^-?(0|[1-9][0-9]*)(\.[0-9]{1,18})?$/, "must be a decimal with at most 18 fractional digits");

export const PartnerFixture = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/),
  name: z.string().min(1),
  rate_limits: z
    .strictObject({ sandbox: z.int().positive().optional(), production: z.int().positive().optional() })
    .optional(),
  signing_secrets: z.array(
    z.string().regex(/^whsec_[A-Za-z0-9_-]{32}$/, "must be whsec_ + 32 base64url characters"),
  ),
  api_keys: z.array(
    z.strictObject({
      key_hash: z.string().regex(/^[0-9a-f]{64}$/, "must be the lowercase hex SHA-256 of the key"),
      environment: z.enum(["sandbox", "production"]),
      status: z.enum(["active", "revoked"]),
      label: z.string().optional(),
    }),
  ),
});

export const ProductFixture = z
  .strictObject({
    partner_id: z.string(),
    slug: z.string().regex(SLUG_PATTERN, "must be lowercase letters, digits and dashes (at most 64)"),
    chain: z.string(),
    chain_id: z.int().positive(),
    wrapper_address: Address,
    underlying_vault_address: Address,
    asset_address: Address,
    asset_symbol: z.string().min(1),
    asset_decimals: z.int().min(0).max(36),
    decimals_offset: z.int().min(0).max(36),
    status: ProductStatus,
    service_fee_bps: z.int().min(0).max(10000),
    partner_fee_bps: z.int().min(0).max(10000),
    display_name: z.string().min(1),
    description: z.string(),
    metrics: z
      .strictObject({
        as_of_date: IsoDate,
        wrapper_total_assets: BaseUnits,
        underlying_apy: Fraction,
      })
      .nullable(),
  })
  .superRefine((p, ctx) => {
    // CONTRACT §2: a product whose fees exceed 100 % is refused at load time, not served.
    if (p.service_fee_bps + p.partner_fee_bps > 10000)
      ctx.addIssue({
        code: "custom",
        path: ["partner_fee_bps"],
        message: "service_fee_bps + partner_fee_bps exceeds 10000",
      });
  });

export const VaultFixture = z.strictObject({
  chain_id: z.int().positive(),
  wrapper_address: Address,
  total_assets: BaseUnits,
  total_supply: BaseUnits,
  holdings: z.record(z.string(), BaseUnits),
});

export const PriceFixture = z.strictObject({
  chain_id: z.int().positive(),
  asset_address: Address,
  usd_price: Fraction,
});

export interface SandboxData {
  readonly partners: MemoryPartnerStore;
  readonly keys: MemoryKeyStore;
  readonly products: MemoryProductSource;
  readonly positions: MemoryPositionSource;
  readonly prices: MemoryPriceSource;
  /** The records, for tools and tests. */
  readonly productRecords: readonly ProductRecord[];
  readonly partnerList: readonly Partner[];
}

/**
 * Validates the four fixture files and builds the in-memory stores.
 *
 * @example
 * const data = loadFixtures({ "partners.json": JSON.parse(a), "products.json": JSON.parse(b), … });
 */
export function loadFixtures(
  files: Readonly<Record<FixtureFileName, unknown>>,
  options: { chains?: Readonly<Record<string, number>>; dir?: string } = {},
): SandboxData {
  const chains = options.chains ?? EVM_CHAINS;
  const name = (file: string) =>
    options.dir === undefined ? file : `${options.dir.replace(/\/$/, "")}/${file}`;

  const partnerRows = parseFile(name("partners.json"), z.array(PartnerFixture), files["partners.json"]);
  const productRows = parseFile(name("products.json"), z.array(ProductFixture), files["products.json"]);
  const vaultRows = parseFile(name("vaults.json"), z.array(VaultFixture), files["vaults.json"]);
  const priceRows = parseFile(name("prices.json"), z.array(PriceFixture), files["prices.json"]);

  const partners: Partner[] = [];
  const keys: ApiKeyRecord[] = [];
  const partnerIds = new Set<string>();
  const keyHashes = new Set<string>();
  partnerRows.forEach((row, i) => {
    if (partnerIds.has(row.id))
      throw new FixtureError(name("partners.json"), `[${i}].id`, `duplicate partner id "${row.id}"`);
    partnerIds.add(row.id);
    partners.push({
      id: row.id,
      name: row.name,
      rateLimits: row.rate_limits,
      signingSecrets: row.signing_secrets,
    });
    row.api_keys.forEach((key, j) => {
      if (keyHashes.has(key.key_hash))
        throw new FixtureError(name("partners.json"), `[${i}].api_keys[${j}].key_hash`, "duplicate key hash");
      keyHashes.add(key.key_hash);
      keys.push({
        keyHash: key.key_hash,
        partnerId: row.id,
        environment: key.environment,
        status: key.status,
        label: key.label,
      });
    });
  });

  const partnerById = new Map(partners.map((p) => [p.id, p]));
  const slugs = new Set<string>();
  const products = productRows.map((row, i): ProductRecord => {
    const file = name("products.json");
    const partner = partnerById.get(row.partner_id);
    if (partner === undefined)
      throw new FixtureError(file, `[${i}].partner_id`, `unknown partner "${row.partner_id}"`);
    if (slugs.has(`${row.partner_id}/${row.slug}`))
      throw new FixtureError(file, `[${i}].slug`, `duplicate slug "${row.slug}"`);
    slugs.add(`${row.partner_id}/${row.slug}`);
    const expectedChainId = chains[row.chain];
    if (expectedChainId === undefined)
      throw new FixtureError(file, `[${i}].chain`, `unknown chain "${row.chain}"`);
    if (expectedChainId !== row.chain_id)
      throw new FixtureError(
        file,
        `[${i}].chain_id`,
        `${row.chain} has chain id ${expectedChainId}, not ${row.chain_id}`,
      );
    let metrics: ProductRecord["metrics"] = null;
    if (row.metrics !== null) {
      const apy = parseDecimal(row.metrics.underlying_apy, RATE_DECIMALS);
      // (1 + n) must stay positive for the monthly 12th root (CONTRACT §2).
      if (apy <= -(10n ** BigInt(RATE_DECIMALS)))
        throw new FixtureError(
          file,
          `[${i}].metrics.underlying_apy`,
          "must be greater than -1 (a loss of 100 % or more)",
        );
      netApy(apy, row.service_fee_bps, row.partner_fee_bps);
      metrics = {
        asOfDate: row.metrics.as_of_date,
        wrapperTotalAssets: BigInt(row.metrics.wrapper_total_assets),
        underlyingApyWad: apy,
      };
    }
    return {
      partnerId: partner.id,
      partnerName: partner.name,
      slug: row.slug,
      chain: row.chain,
      chainId: row.chain_id,
      wrapperAddress: row.wrapper_address,
      underlyingVaultAddress: row.underlying_vault_address,
      assetAddress: row.asset_address,
      assetSymbol: row.asset_symbol,
      assetDecimals: row.asset_decimals,
      decimalsOffset: row.decimals_offset,
      status: row.status,
      serviceFeeBps: row.service_fee_bps,
      partnerFeeBps: row.partner_fee_bps,
      displayName: row.display_name,
      description: row.description,
      metrics,
    };
  });

  const vaults = vaultRows.map((row, i): VaultState => {
    const holdings = new Map<string, bigint>();
    for (const [wallet, shares] of Object.entries(row.holdings)) {
      const parsed = parseAddress(wallet);
      if (!parsed.ok) throw new FixtureError(name("vaults.json"), `[${i}].holdings.${wallet}`, parsed.reason);
      holdings.set(parsed.address.toLowerCase(), BigInt(shares));
    }
    return {
      chainId: row.chain_id,
      wrapperAddress: row.wrapper_address,
      totalAssets: BigInt(row.total_assets),
      totalSupply: BigInt(row.total_supply),
      holdings,
    };
  });

  const prices = priceRows.map(
    (row): AssetPrice => ({
      chainId: row.chain_id,
      assetAddress: row.asset_address,
      usdPriceWad: parseDecimal(row.usd_price, RATE_DECIMALS),
    }),
  );

  // Without a price every position with shares would answer 503 (CONTRACT §2): refuse at load.
  const priced = new Set(prices.map((row) => `${row.chainId}:${row.assetAddress}`));
  products.forEach((p, i) => {
    if (!priced.has(`${p.chainId}:${p.assetAddress}`))
      throw new FixtureError(
        name("products.json"),
        `[${i}].asset_address`,
        `no USD price for ${p.assetSymbol} ${p.assetAddress} on chain ${p.chainId} in prices.json; every position with shares would answer 503`,
      );
  });

  return {
    partners: new MemoryPartnerStore(partners),
    keys: new MemoryKeyStore(keys),
    products: new MemoryProductSource(products),
    positions: new MemoryPositionSource(vaults),
    prices: new MemoryPriceSource(prices),
    productRecords: products,
    partnerList: partners,
  };
}

function parseFile<T>(file: string, schema: z.ZodType<T>, value: unknown): T {
  if (value === undefined) throw new FixtureError(file, "", "file is missing");
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new FixtureError(file, formatPath(issue.path), issue.message);
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`))
    .join("");
}
