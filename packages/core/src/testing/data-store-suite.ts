/**
 * The read ports a backend serves partners and products from — `KeyStore`, `PartnerStore`,
 * `ProductSource`, `PositionSource`, `PriceSource` — as suites written once: the factory receives
 * the records a test needs and returns stores holding them (for a database: insert, then read
 * through the stores), and each suite checks what the API relies on.
 *
 * @example
 * import { describe, test } from "vitest"; // or node:test, or bun:test
 * const makeStores = async (seed: StoreSeed) => ({
 *   keys: new MemoryKeyStore(seed.keys), partners: new MemoryPartnerStore(seed.partners),
 *   products: new MemoryProductSource(seed.products), positions: new MemoryPositionSource(seed.vaults),
 *   prices: new MemoryPriceSource(seed.prices), close: async () => {},
 * });
 * runKeyStoreSuite({ name: "memory", makeStores, describe, test });
 */

import { toChecksumAddress } from "../evm/address.js";
import { convertToAssets } from "../math/yield-math.js";
import type { ApiKeyRecord, KeyStore } from "../stores/key-store.js";
import type { Partner, PartnerStore } from "../stores/partner-store.js";
import type { Holding, PositionSource, VaultState } from "../stores/position-source.js";
import type { AssetPrice, PriceSource } from "../stores/price-source.js";
import type { ProductRecord, ProductSource } from "../stores/product-source.js";
import { assertDeepEqual, assertEqual } from "./assertions.js";
import { type Closable, type SuiteOptions, uniqueTag, using } from "./suite.js";

/** The records a test writes before it reads them back. */
export interface StoreSeed {
  readonly partners: readonly Partner[];
  readonly keys: readonly ApiKeyRecord[];
  readonly products: readonly ProductRecord[];
  readonly vaults: readonly VaultState[];
  readonly prices: readonly AssetPrice[];
}

export interface DataStores extends Closable {
  readonly keys: KeyStore;
  readonly partners: PartnerStore;
  readonly products: ProductSource;
  readonly positions: PositionSource;
  readonly prices: PriceSource;
}

export interface DataStoreSuiteOptions extends SuiteOptions {
  /**
   * Stores holding at least `seed`. Several calls may share one backend: the records of each call
   * use partner ids, key hashes and addresses of their own.
   */
  readonly makeStores: (seed: StoreSeed) => Promise<DataStores>;
}

const EMPTY: StoreSeed = { partners: [], keys: [], products: [], vaults: [], prices: [] };

/** 64 lowercase hex digits no other run uses. */
function randomHash(): string {
  return (uniqueTag() + uniqueTag() + uniqueTag() + uniqueTag() + uniqueTag() + uniqueTag()).slice(0, 64);
}

/** A random address in EIP-55 form, as `ProductRecord` holds them. */
function randomAddress(): string {
  const bytes = new Uint8Array(20);
  crypto.getRandomValues(bytes);
  return toChecksumAddress(Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""));
}

function partner(overrides: Partial<Partner> = {}): Partner {
  const id = `suite-${uniqueTag()}`;
  return { id, name: `Partner ${id}`, rateLimits: undefined, signingSecrets: [], ...overrides };
}

function product(owner: Partner, slug: string, overrides: Partial<ProductRecord> = {}): ProductRecord {
  return {
    partnerId: owner.id,
    slug,
    chain: "base",
    chainId: 8453,
    wrapperAddress: randomAddress(),
    underlyingVaultAddress: randomAddress(),
    assetAddress: randomAddress(),
    assetSymbol: "USDC",
    assetDecimals: 6,
    decimalsOffset: 12,
    status: "active",
    serviceFeeBps: 50,
    partnerFeeBps: 100,
    displayName: `Product ${slug}`,
    description: "A product of the conformance suite.",
    metrics: {
      asOfDate: "2026-11-20",
      wrapperTotalAssets: 12_345_678_901_234n,
      underlyingApyWad: 52_300_000_000_000_000n,
    },
    ...overrides,
  };
}

export function runKeyStoreSuite(options: DataStoreSuiteOptions): void {
  const { describe, test, makeStores } = options;
  describe(`KeyStore conformance: ${options.name}`, () => {
    test("finds each key by its hash with its partner, environment, status and label", async () => {
      const owner = partner();
      const keys: ApiKeyRecord[] = [
        {
          keyHash: randomHash(),
          partnerId: owner.id,
          environment: "sandbox",
          status: "active",
          label: "first",
        },
        { keyHash: randomHash(), partnerId: owner.id, environment: "sandbox", status: "active" },
        {
          keyHash: randomHash(),
          partnerId: owner.id,
          environment: "production",
          status: "active",
          label: "live",
        },
        {
          keyHash: randomHash(),
          partnerId: owner.id,
          environment: "sandbox",
          status: "revoked",
          label: "leaked",
        },
      ];
      await using(await makeStores({ ...EMPTY, partners: [owner], keys }), async ({ keys: store }) => {
        for (const key of keys) {
          const found = await store.findByHash(key.keyHash);
          // A store may name the key by an id of its own (ApiKeyRecord.id, what logs and metrics
          // show): decimal digits when present.
          const { id, ...rest } = found ?? { id: undefined };
          assertEqual(id === undefined || /^[1-9][0-9]*$/.test(id), true, `key ${key.label}: id ${id}`);
          assertDeepEqual(found === undefined ? undefined : rest, key, `key ${key.label}`);
        }
      });
    });

    test("an unknown hash, or a known one in another case or one digit off, finds nothing", async () => {
      const owner = partner();
      const key: ApiKeyRecord = {
        keyHash: randomHash(),
        partnerId: owner.id,
        environment: "sandbox",
        status: "active",
      };
      await using(await makeStores({ ...EMPTY, partners: [owner], keys: [key] }), async ({ keys: store }) => {
        assertEqual(await store.findByHash(randomHash()), undefined, "unknown hash");
        assertEqual(await store.findByHash(key.keyHash.toUpperCase()), undefined, "upper-case hash");
        const last = key.keyHash.endsWith("0") ? "1" : "0";
        assertEqual(await store.findByHash(key.keyHash.slice(0, 63) + last), undefined, "one digit off");
        assertEqual(await store.findByHash(""), undefined, "empty");
      });
    });

    test("keys of two partners stay with their partner", async () => {
      const [a, b] = [partner(), partner()];
      const keys: ApiKeyRecord[] = [
        { keyHash: randomHash(), partnerId: a.id, environment: "sandbox", status: "active" },
        { keyHash: randomHash(), partnerId: b.id, environment: "sandbox", status: "active" },
      ];
      await using(await makeStores({ ...EMPTY, partners: [a, b], keys }), async ({ keys: store }) => {
        assertEqual((await store.findByHash(keys[0]!.keyHash))?.partnerId, a.id);
        assertEqual((await store.findByHash(keys[1]!.keyHash))?.partnerId, b.id);
      });
    });
  });
}

export function runPartnerStoreSuite(options: DataStoreSuiteOptions): void {
  const { describe, test, makeStores } = options;
  describe(`PartnerStore conformance: ${options.name}`, () => {
    test("a partner comes back with its name, per-environment limits and active signing secrets", async () => {
      const secrets = [
        "whsec_1suBNkFDZXm7p89emMHkukazxczgnBxt",
        `whsec_${uniqueTag()}${uniqueTag()}abcdefgh`,
      ];
      const partners = [
        partner({
          name: "Both Limits Ltd",
          rateLimits: { sandbox: 7, production: 7000 },
          signingSecrets: secrets,
        }),
        partner({ name: "Sandbox Limit Only", rateLimits: { sandbox: 3 }, signingSecrets: [secrets[0]!] }),
        partner({ name: "Défaut — no limits, no secrets ✓", rateLimits: undefined, signingSecrets: [] }),
      ];
      await using(await makeStores({ ...EMPTY, partners }), async ({ partners: store }) => {
        for (const want of partners) {
          const got = await store.getPartner(want.id);
          assertEqual(got?.id, want.id);
          assertEqual(got?.name, want.name);
          assertEqual(got?.rateLimits?.sandbox, want.rateLimits?.sandbox, `${want.name}: sandbox limit`);
          assertEqual(
            got?.rateLimits?.production,
            want.rateLimits?.production,
            `${want.name}: production limit`,
          );
          // Any active secret verifies (CONTRACT §4): the order is not part of the contract.
          assertDeepEqual(
            [...(got?.signingSecrets ?? [])].sort(),
            [...want.signingSecrets].sort(),
            want.name,
          );
        }
      });
    });

    test("an unknown partner id finds nothing", async () => {
      await using(await makeStores({ ...EMPTY, partners: [partner()] }), async ({ partners: store }) => {
        assertEqual(await store.getPartner(`suite-${uniqueTag()}`), undefined);
        assertEqual(await store.getPartner(""), undefined);
      });
    });
  });
}

export function runProductSourceSuite(options: DataStoreSuiteOptions): void {
  const { describe, test, makeStores } = options;
  describe(`ProductSource, PositionSource and PriceSource conformance: ${options.name}`, () => {
    test("a partner's products, every status, ordered by slug, each exactly as stored", async () => {
      const owner = partner({ name: "Ördered Products" });
      const other = partner();
      const products = [
        product(owner, "zeta-last", { status: "deprecated", serviceFeeBps: 0, partnerFeeBps: 0 }),
        product(owner, "alpha-1", { status: "paused" }),
        product(owner, "alpha", {
          metrics: null,
          assetSymbol: "WETH",
          assetDecimals: 18,
          decimalsOffset: 0,
          chain: "ethereum",
          chainId: 1,
        }),
        product(owner, "a-9", {
          metrics: {
            asOfDate: "2026-02-28",
            // Larger than any 64-bit integer; a negative APY with all 18 fractional digits.
            wrapperTotalAssets: 10n ** 70n + 7n,
            underlyingApyWad: -123_456_789_012_345_678n,
          },
          serviceFeeBps: 10_000,
          partnerFeeBps: 0,
        }),
        product(other, "alpha"),
      ];
      await using(
        await makeStores({ ...EMPTY, partners: [owner, other], products }),
        async ({ products: source }) => {
          const listed = await source.listProducts(owner.id);
          assertDeepEqual(
            listed.map((p) => p.slug),
            ["a-9", "alpha", "alpha-1", "zeta-last"],
            "ordered by slug",
          );
          for (const want of products.slice(0, 4)) {
            assertDeepEqual(
              listed.find((p) => p.slug === want.slug),
              want,
              `listed ${want.slug}`,
            );
            assertDeepEqual(await source.getProduct(owner.id, want.slug), want, `get ${want.slug}`);
          }
          assertDeepEqual(
            await source.getProduct(other.id, "alpha"),
            products[4],
            "the other partner's alpha",
          );
        },
      );
    });

    test("another partner's slug, an unknown slug or partner finds nothing", async () => {
      const [owner, other] = [partner(), partner()];
      const products = [product(owner, "mine")];
      await using(
        await makeStores({ ...EMPTY, partners: [owner, other], products }),
        async ({ products: source }) => {
          assertEqual(await source.getProduct(other.id, "mine"), undefined, "another partner's slug");
          assertEqual(await source.getProduct(owner.id, "theirs"), undefined, "unknown slug");
          assertDeepEqual(await source.listProducts(other.id), [], "a partner without products");
          assertDeepEqual(await source.listProducts(`suite-${uniqueTag()}`), [], "an unknown partner");
        },
      );
    });

    test("positions: shares of a wallet (any letter case) and their assets by convertToAssets", async () => {
      const owner = partner();
      const held = product(owner, "held");
      const empty = product(owner, "no-vault");
      const wallet = randomAddress();
      const vault: VaultState = {
        chainId: held.chainId,
        wrapperAddress: held.wrapperAddress,
        totalAssets: 12_345_678_901_234n,
        totalSupply: 11_900_000_000_000_000_000_000_000n,
        holdings: new Map([[wallet.toLowerCase(), 1_500_250_000_000_000_000_000n]]),
      };
      const seed = { ...EMPTY, partners: [owner], products: [held, empty], vaults: [vault] };
      await using(await makeStores(seed), async ({ positions }) => {
        const shares = 1_500_250_000_000_000_000_000n;
        // The audit view (`vault`) is optional; when a source gives it, it holds the vault's totals.
        const totals = { totalAssets: vault.totalAssets, totalSupply: vault.totalSupply };
        const strip = (h: Holding, label: string) => {
          if (h.vault !== undefined) assertDeepEqual(h.vault, totals, `${label}: the audit view's totals`);
          return { shares: h.shares, assets: h.assets };
        };
        // Holdings are keyed by lower-case wallet; the API asks with the EIP-55 form.
        assertDeepEqual(strip(await positions.getHolding(held, wallet), "held"), {
          shares,
          assets: convertToAssets(shares, vault.totalAssets, vault.totalSupply, held.decimalsOffset),
        });
        assertDeepEqual(
          strip(await positions.getHolding(held, randomAddress()), "no shares"),
          { shares: 0n, assets: 0n },
          "no shares",
        );
        assertDeepEqual(await positions.getHolding(empty, wallet), { shares: 0n, assets: 0n }, "no vault");
      });
    });

    test("prices: the USD price of a product's asset, undefined when unknown", async () => {
      const owner = partner();
      const priced = product(owner, "priced");
      const unpriced = product(owner, "unpriced");
      const prices: AssetPrice[] = [
        {
          chainId: priced.chainId,
          assetAddress: priced.assetAddress,
          usdPriceWad: 97_234_510_000_000_000_000_000n,
        },
        // The same address on another chain is another asset.
        { chainId: 1, assetAddress: unpriced.assetAddress, usdPriceWad: 1n },
      ];
      const seed = { ...EMPTY, partners: [owner], products: [priced, unpriced], prices };
      await using(await makeStores(seed), async ({ prices: source }) => {
        assertEqual(await source.getUsdPriceWad(priced), 97_234_510_000_000_000_000_000n);
        assertEqual(await source.getUsdPriceWad(unpriced), undefined);
      });
    });
  });
}
