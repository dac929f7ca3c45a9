/**
 * Positions (interface.md §4.3; CONTRACT §2, §3): addresses are validated and echoed in EIP-55
 * form, an empty wallet is zeros, and a real position is formatted at the right precision.
 * @module
 */
import { toChecksumAddress } from "@partner-yield/core";
import { isCanonicalDecimal } from "@partner-yield/core/math";
import { expectedPosition, productsOfKey } from "../fixtures.js";
import type { Exchange } from "../http/client.js";
import { missingSlug } from "./auth.js";
import { type CheckContext, isRecord, type ListedProduct, positionPath, productPath } from "./context.js";
import { fractionDigits } from "./decimal-text.js";
import type { CheckDefinition } from "./types.js";

const POSITION_AMOUNTS = ["shares", "assets", "usd_value"] as const;

/** The amounts of a 200 position response, or undefined when it is not one. */
function positionAmounts(
  ex: Exchange,
): { slug: string; wallet: string; amounts: Record<string, unknown> } | undefined {
  if (ex.response?.status !== 200 || ex.request.method !== "GET") return undefined;
  const match = /^\/api\/partner\/products\/([^/?]+)\/position\?address=([^&]*)$/.exec(ex.request.path);
  if (match === null) return undefined;
  try {
    const body: unknown = JSON.parse(ex.response.text);
    const data = isRecord(body) ? body["data"] : undefined;
    if (!isRecord(data)) return undefined;
    return {
      slug: decodeURIComponent(match[1]!),
      wallet: decodeURIComponent(match[2]!).toLowerCase(),
      amounts: data,
    };
  } catch {
    return undefined;
  }
}

/** Reads `data` of a 200 position response. */
function positionData(
  t: CheckContext,
  ex: Parameters<CheckContext["expectOk"]>[0],
  what: string,
): Record<string, unknown> {
  const body = t.expectOk(ex, what);
  const data = body["data"];
  t.check(isRecord(data), `${what}: "data" is not an object`, ex);
  return data;
}

/** A mixed-case address whose case does not match its EIP-55 checksum. */
export function badChecksum(address: string): string {
  const good = toChecksumAddress(address);
  const chars = [...good];
  // Flip the case of one letter; the other letters keep the mixed case, so it is not uniform.
  const letters = chars.map((c, i) => (i >= 2 && /[a-fA-F]/.test(c) ? i : -1)).filter((i) => i >= 0);
  const i = letters[Math.floor(letters.length / 2)]!;
  const c = chars[i]!;
  chars[i] = c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase();
  const bad = chars.join("");
  const hex = bad.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return badChecksum(`0x${"ab".repeat(20)}`);
  return bad;
}

function anyProduct(t: CheckContext): ListedProduct {
  return t.products().find((p) => p.status === "active") ?? t.products()[0]!;
}

export const POSITION_CHECKS: readonly CheckDefinition[] = [
  {
    id: "POS-01",
    title: "A wallet that holds nothing gets 200 with zeros",
    category: "position",
    level: "reference",
    source: "CONTRACT §2 (Position)",
    cost: 1,
    async run(t: CheckContext) {
      const p = anyProduct(t);
      const wallet = t.randomWallet();
      const ex = await t.get(positionPath(p.slug, wallet));
      const data = positionData(t, ex, `position of an empty wallet in ${p.slug}`);
      for (const field of POSITION_AMOUNTS) {
        t.check(
          data[field] === "0",
          `${field} should be "0" for a wallet that holds nothing, got ${JSON.stringify(data[field])}`,
          ex,
        );
      }
    },
  },
  {
    id: "POS-02",
    title: "The position echoes the wallet and the product queried",
    category: "position",
    level: "spec",
    source: "interface.md §2 (Position), §4.3",
    reference: "the wallet in EIP-55 checksum form (CONTRACT §3)",
    cost: 1,
    async run(t: CheckContext) {
      const p = anyProduct(t);
      const wallet = t.randomWallet(1);
      const ex = await t.get(positionPath(p.slug, wallet));
      const data = positionData(t, ex, `position in ${p.slug}`);
      const echoed = data["wallet_address"];
      t.check(
        typeof echoed === "string" && echoed.toLowerCase() === wallet,
        `wallet_address should be the wallet queried (${wallet}), got ${JSON.stringify(echoed)}`,
        ex,
      );
      t.check(
        data["product_slug"] === p.slug,
        `product_slug should be "${p.slug}", got ${JSON.stringify(data["product_slug"])}`,
        ex,
      );
      if (t.reference) {
        const expected = toChecksumAddress(wallet);
        t.check(
          echoed === expected,
          `wallet_address should be in EIP-55 form ${expected}, got ${JSON.stringify(echoed)}`,
          ex,
        );
      }
    },
  },
  {
    id: "POS-03",
    title: "A mixed-case address with a bad EIP-55 checksum is refused",
    category: "position",
    level: "reference",
    source: "CONTRACT §3 (address)",
    cost: 1,
    async run(t: CheckContext) {
      const p = anyProduct(t);
      const address = badChecksum(t.randomWallet(2));
      const ex = await t.get(positionPath(p.slug, address));
      t.expectRefused(ex, `position for ${address} (checksum broken)`, {
        status: 400,
        code: "invalid_address",
      });
    },
  },
  {
    id: "POS-04",
    title: "Malformed or missing addresses are refused",
    category: "position",
    level: "spec",
    source: "interface.md §4.3 (0x, 42 characters)",
    reference: "400 invalid_address, a missing address too (CONTRACT §3, docs/contract.md)",
    cost: 7,
    async run(t: CheckContext) {
      const p = anyProduct(t);
      const wallet = t.randomWallet(3);
      const cases: Array<[string, string | undefined]> = [
        ["40 hex digits without 0x", wallet.slice(2)],
        ["41 characters", wallet.slice(0, 41)],
        ["43 characters", `${wallet}0`],
        ["a non-hex digit", `${wallet.slice(0, 41)}g`],
        ["an upper-case 0X prefix", `0X${wallet.slice(2)}`],
        ["an empty address", ""],
        ["no address parameter", undefined],
      ];
      for (const [what, address] of cases) {
        const ex = await t.get(positionPath(p.slug, address));
        t.expectRefused(ex, `position with ${what}`, { status: 400, code: "invalid_address" });
      }
    },
  },
  {
    id: "POS-05",
    title: "An all-uppercase address is accepted and echoed in EIP-55 form",
    category: "position",
    level: "reference",
    source: "CONTRACT §3 (address)",
    cost: 1,
    async run(t: CheckContext) {
      const p = anyProduct(t);
      const wallet = t.randomWallet(4);
      const upper = `0x${wallet.slice(2).toUpperCase()}`;
      const ex = await t.get(positionPath(p.slug, upper));
      const data = positionData(t, ex, `position for ${upper}`);
      const expected = toChecksumAddress(wallet);
      t.check(
        data["wallet_address"] === expected,
        `wallet_address should be ${expected}, got ${JSON.stringify(data["wallet_address"])}`,
        ex,
      );
    },
  },
  {
    id: "POS-06",
    title: "A wallet with a position gets its shares, assets and USD value",
    category: "position",
    level: "spec",
    source: "interface.md §2 (Position), §4.3",
    reference: "canonical decimals; assets at ≤ asset_decimals digits, usd_value at ≤ 2 (CONTRACT §1, §2)",
    cost: (o) => o.productSample,
    needs: ["wallet"],
    async run(t: CheckContext) {
      const wallet = t.inputs.wallet!;
      let holdings = 0;
      for (const p of t.products().slice(0, t.inputs.plan.productSample)) {
        const ex = await t.get(positionPath(p.slug, wallet));
        const data = positionData(t, ex, `position of ${wallet} in ${p.slug}`);
        for (const field of POSITION_AMOUNTS) {
          const value = data[field];
          t.check(
            typeof value === "string",
            `${p.slug}: ${field} should be a string, got ${JSON.stringify(value)}`,
            ex,
          );
          if (t.reference) {
            t.check(
              isCanonicalDecimal(value) && !value.startsWith("-"),
              `${p.slug}: ${field} should be a non-negative canonical decimal, got ${JSON.stringify(value)}`,
              ex,
            );
          }
        }
        if (t.reference) {
          const assets = data["assets"] as string;
          const usd = data["usd_value"] as string;
          const d = p.assetDecimals ?? 0;
          t.check(
            fractionDigits(assets) <= d,
            `${p.slug}: assets ${assets} has more than asset_decimals (${d}) fractional digits`,
            ex,
          );
          t.check(
            fractionDigits(usd) <= 2,
            `${p.slug}: usd_value ${usd} has more than 2 fractional digits`,
            ex,
          );
          t.check(
            data["wallet_address"] === toChecksumAddress(wallet),
            `${p.slug}: wallet_address is not ${toChecksumAddress(wallet)}`,
            ex,
          );
        }
        if (data["shares"] !== "0") holdings++;
      }
      t.check(
        holdings > 0,
        `the wallet ${wallet} holds no shares in any of the products checked; pass --wallet with a wallet that does`,
      );
    },
  },
  {
    id: "POS-07",
    title: "Position works for paused and deprecated products",
    category: "position",
    level: "reference",
    source: "CONTRACT §8",
    cost: 2,
    async run(t: CheckContext) {
      const inactive = t.products().filter((p) => p.status === "paused" || p.status === "deprecated");
      if (inactive.length === 0) t.skip("the target lists no paused or deprecated product");
      for (const p of inactive.slice(0, 2)) {
        const ex = await t.get(positionPath(p.slug, t.randomWallet(5)));
        positionData(t, ex, `position in ${p.status} product ${p.slug}`);
      }
    },
  },
  {
    id: "POS-08",
    title: "The product is resolved before the address: unknown slug with a bad address is 404",
    category: "position",
    level: "reference",
    source: "CONTRACT §3 (slug)",
    cost: 1,
    async run(t: CheckContext) {
      const ex = await t.get(`${productPath(missingSlug(t))}/position?address=nonsense`);
      t.expectRefused(ex, "position in an unknown product with a malformed address", {
        status: 404,
        code: "product_not_found",
      });
    },
  },
  {
    id: "POS-09",
    title: "A position's assets and USD value follow ERC-4626 convertToAssets and the price",
    category: "position",
    level: "reference",
    source: "CONTRACT §2 (Position)",
    cost: (o) => 2 * o.productSample,
    needs: ["fixtures"],
    async run(t: CheckContext) {
      const fixtures = t.inputs.fixtures!;
      const own = productsOfKey(fixtures, t.inputs.apiKey);
      if (own === undefined)
        t.skip(
          `no partner of the fixtures (${fixtures.source}) holds the API key: are they this deployment's?`,
        );
      const wallets = [t.randomWallet(9), ...(t.inputs.wallet === undefined ? [] : [t.inputs.wallet])];
      let compared = 0;
      for (const p of t.products().slice(0, t.inputs.plan.productSample)) {
        const record = own.find((r) => r.slug === p.slug);
        t.check(
          record !== undefined,
          `the target lists ${p.slug}, which the fixtures (${fixtures.source}) do not hold for this partner: pass the deployment's own --fixtures`,
        );
        for (const wallet of wallets) {
          const ex = await t.get(positionPath(p.slug, wallet));
          const data = positionData(t, ex, `position of ${wallet} in ${p.slug}`);
          const expected = expectedPosition(fixtures, record, wallet);
          for (const field of POSITION_AMOUNTS) {
            const want = expected[field];
            if (want === undefined) {
              t.warn(
                `${p.slug}: the fixtures hold no USD price for ${record.assetSymbol}; usd_value not compared`,
              );
              continue;
            }
            t.check(
              data[field] === want,
              `${p.slug}, ${wallet}: ${field} should be "${want}" (convertToAssets over the vault totals, floor(assets × price) for usd_value), got ${JSON.stringify(data[field])}`,
              ex,
            );
          }
          compared++;
        }
      }
      t.check(compared > 0, "no position was compared");
    },
  },
  {
    id: "POS-10",
    title: "Position amounts are consistent: no assets without shares, no USD value without assets",
    category: "position",
    level: "reference",
    source: "CONTRACT §2 (Position)",
    cost: 1,
    async run(t: CheckContext) {
      const p = anyProduct(t);
      await t.get(positionPath(p.slug, t.randomWallet(10)));
      const seen = new Map<string, { amounts: Record<string, unknown>; ex: Exchange }>();
      for (const ex of t.allExchanges) {
        const read = positionAmounts(ex);
        if (read === undefined) continue;
        const { shares, assets, usd_value: usd } = read.amounts;
        const where = `${read.slug}, ${read.wallet}`;
        if (shares === "0")
          t.check(
            assets === "0",
            `${where}: no shares, yet assets ${JSON.stringify(assets)} (convertToAssets(0) = 0)`,
            ex,
          );
        if (assets === "0")
          t.check(
            usd === "0",
            `${where}: no assets, yet usd_value ${JSON.stringify(usd)} (0 × price = 0)`,
            ex,
          );
        const key = `${read.slug} ${read.wallet}`;
        const before = seen.get(key);
        if (before !== undefined) {
          const changed = POSITION_AMOUNTS.filter((f) => before.amounts[f] !== read.amounts[f]);
          // A live vault moves between two reads; only a warning.
          if (changed.length > 0)
            t.warn(
              `${where}: two reads differ in ${changed.join(", ")} (a moving vault, or an unstable computation)`,
            );
        }
        seen.set(key, { amounts: read.amounts, ex });
      }
    },
  },
];
