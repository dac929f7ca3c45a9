/**
 * Positions (interface.md §4.3; CONTRACT §2, §3): addresses are validated and echoed in EIP-55
 * form, an empty wallet is zeros, and a real position is formatted at the right precision.
 * @module
 */
import type { Exchange } from "../http/client.js";
import { isCanonical } from "../oracle/decimal.js";
import { expectedPosition, productsOfKey } from "../oracle/fixtures.js";
import { missingSlug } from "./auth.js";
import { contract, GAPS, spec } from "./citations.js";
import {
  bodyOf,
  type CheckContext,
  isRecord,
  isRefusal,
  type ListedProduct,
  positionPath,
  productPath,
} from "./context.js";
import { fractionDigits, isDecimalText, toScaled } from "./decimal-text.js";
import type { CheckDefinition } from "./definition.js";
import { toChecksumAddress } from "./from-core.js";
import { failOnWrong, type WrongFigure } from "./wrong.js";

const POSITION_AMOUNTS = ["shares", "assets", "usd_value"] as const;

/** The amounts of a 200 position response, or undefined when it is not one. */
function positionAmounts(
  ex: Exchange,
): { slug: string; wallet: string; amounts: Record<string, unknown> } | undefined {
  if (ex.response?.status !== 200 || ex.request.method !== "GET") return undefined;
  const match = /^\/api\/partner\/products\/([^/?]+)\/position\?address=([^&]*)$/.exec(ex.request.path);
  if (match === null) return undefined;
  const body = bodyOf(ex);
  const data = isRecord(body) ? body["data"] : undefined;
  if (!isRecord(data)) return undefined;
  return {
    slug: decodeURIComponent(match[1]!),
    wallet: decodeURIComponent(match[2]!).toLowerCase(),
    amounts: data,
  };
}

/** Reads `data` of a 200 position response. */
function positionData(t: CheckContext, ex: Exchange, what: string): Record<string, unknown> {
  const body = t.expectOk(ex, what);
  const data = body["data"];
  t.checkWith("schema", isRecord(data), `${what}: "data" is not an object`, ex);
  return data;
}

/**
 * At level `spec`, the answer for a wallet that holds nothing is not shown (interface.md §4.3):
 * a refusal there is skipped with the reason, never failed.
 */
function emptyWalletAnswer(t: CheckContext, ex: Exchange, wallet: string, slug: string): void {
  if (t.reference || !isRefusal(ex)) return;
  t.skip(
    `the target refused the position of ${wallet} in ${slug} (HTTP ${ex.response?.status}); interface.md §4.3 ` +
      `leaves open what a wallet that holds nothing gets${t.inputs.wallet === undefined ? ": pass --wallet with a wallet that holds a position" : ` (does ${wallet} hold nothing in ${slug}?)`}`,
  );
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
  const hexDigits = bad.slice(2);
  if (hexDigits === hexDigits.toLowerCase() || hexDigits === hexDigits.toUpperCase())
    return badChecksum(`0x${"ab".repeat(20)}`);
  return bad;
}

function anyProduct(t: CheckContext): ListedProduct {
  return t.products().find((p) => p.status === "active") ?? t.products()[0]!;
}

const POSITION_ENDPOINT = spec(
  "§4.3",
  "Query parameter: `address` (string, required): a wallet address, starting with `0x`, 42 characters long.",
);
const POSITION_RESPONSE = spec("§4.3", "Response: `{ success: boolean, data: Position }`.");
const EMPTY_ZEROS = contract(
  "§2",
  'A wallet that holds nothing gets **200** with `shares`, `assets` and `usd_value` all `"0"`',
);
const ADDRESS_RULE = contract(
  "§3",
  "All-lowercase and all-uppercase hex are accepted; mixed case must match the EIP-55 checksum (keccak-256), else `400 invalid_address`. The response echoes it in EIP-55 form.",
);

export const POSITION_CHECKS: readonly CheckDefinition[] = [
  {
    id: "POS-01",
    kind: "scenario",
    title: "A wallet that holds nothing gets 200 with zeros",
    category: "position",
    level: "reference",
    cites: [EMPTY_ZEROS],
    failure: "value",
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
    kind: "scenario",
    title: "The position echoes the wallet and the product queried",
    category: "position",
    level: "spec",
    cites: [
      spec("§2", "| wallet_address | string | The wallet queried. |"),
      spec("§2", "| product_slug | string | The product queried. |"),
    ],
    tolerates: [GAPS.emptyWallet],
    reference: { asserts: "the wallet in EIP-55 checksum form", cites: [ADDRESS_RULE] },
    failure: "value",
    cost: 1,
    async run(t: CheckContext) {
      const p = anyProduct(t);
      const wallet = (t.reference ? undefined : t.inputs.wallet?.toLowerCase()) ?? t.randomWallet(1);
      const ex = await t.get(positionPath(p.slug, wallet));
      emptyWalletAnswer(t, ex, wallet, p.slug);
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
    kind: "scenario",
    title: "A mixed-case address with a bad EIP-55 checksum is refused",
    category: "position",
    level: "reference",
    cites: [ADDRESS_RULE],
    failure: "status",
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
    kind: "scenario",
    title: "Malformed or missing addresses are refused",
    category: "position",
    level: "spec",
    cites: [POSITION_ENDPOINT],
    tolerates: [GAPS.statusCodes],
    reference: {
      asserts:
        "400 invalid_address, a missing address too; a non-hex digit and a 0X prefix refused too (at level spec they need only not cause a 5xx)",
      cites: [
        contract("§3", "**address**: `0x` + 40 hex digits."),
        contract("§6", "No input, however malformed, produces a 500."),
      ],
    },
    failure: "status",
    cost: 7,
    async run(t: CheckContext) {
      const p = anyProduct(t);
      const wallet = t.randomWallet(3);
      // [what, address, refused at level spec]: interface.md says "starting with 0x, 42 characters
      // long"; hex digits and the case of the prefix are CONTRACT §3's.
      const cases: Array<[string, string | undefined, boolean]> = [
        ["40 hex digits without 0x", wallet.slice(2), true],
        ["41 characters", wallet.slice(0, 41), true],
        ["43 characters", `${wallet}0`, true],
        ["an empty address", "", true],
        ["no address parameter", undefined, true],
        ["a non-hex digit", `${wallet.slice(0, 41)}g`, false],
        ["an upper-case 0X prefix", `0X${wallet.slice(2)}`, false],
      ];
      for (const [what, address, atSpec] of cases) {
        const ex = await t.get(positionPath(p.slug, address));
        if (t.reference || atSpec) {
          t.expectRefused(ex, `position with ${what}`, { status: 400, code: "invalid_address" });
        } else {
          t.checkWith(
            "server_error",
            t.status(ex) < 500,
            `position with ${what}: server error ${t.status(ex)}`,
            ex,
          );
        }
      }
    },
  },
  {
    id: "POS-05",
    kind: "scenario",
    title: "An all-uppercase address is accepted and echoed in EIP-55 form",
    category: "position",
    level: "reference",
    cites: [ADDRESS_RULE],
    failure: "value",
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
    kind: "scenario",
    title: "A wallet with a position gets its shares, assets and USD value",
    category: "position",
    level: "spec",
    cites: [POSITION_RESPONSE, spec("§2", "| shares | string | Share amount held. |")],
    tolerates: [GAPS.emptyWallet, GAPS.precision],
    reference: {
      asserts:
        "canonical decimals; assets at ≤ asset_decimals digits, usd_value at ≤ 2; the wallet in EIP-55 form",
      cites: [
        contract("§1", "Every amount, rate and value is a JSON **string** holding a canonical decimal"),
        contract(
          "§2",
          "Amounts are in base units, then `shares` is formatted with `D + δ` and `assets` with `D`.",
        ),
        contract("§2", "`usd_value = floor(assets × price_usd)` at 2 fractional digits (cents)."),
      ],
    },
    failure: "value",
    cost: (o) => o.productSample,
    needs: ["wallet"],
    async run(t: CheckContext) {
      const wallet = t.inputs.wallet!;
      let holdings = 0;
      const refused: string[] = [];
      for (const p of t.products().slice(0, t.inputs.plan.productSample)) {
        const ex = await t.get(positionPath(p.slug, wallet));
        if (!t.reference && isRefusal(ex)) {
          // The wallet may hold nothing in this product: not shown (interface.md §4.3).
          refused.push(p.slug);
          continue;
        }
        const data = positionData(t, ex, `position of ${wallet} in ${p.slug}`);
        for (const field of POSITION_AMOUNTS) {
          const value = data[field];
          t.checkWith(
            "schema",
            typeof value === "string",
            `${p.slug}: ${field} should be a string, got ${JSON.stringify(value)}`,
            ex,
          );
          if (t.reference) {
            t.check(
              isCanonical(value) && !value.startsWith("-"),
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
        const shares = data["shares"] as string;
        if (isDecimalText(shares) ? toScaled(shares).units !== 0n : shares !== "0") holdings++;
      }
      if (refused.length > 0)
        t.note(`no position answered for ${wallet} in ${refused.join(", ")} (it may hold nothing there)`);
      t.check(
        holdings > 0,
        `the wallet ${wallet} holds no shares in any of the ${t.inputs.plan.productSample} products checked; pass --wallet with a wallet that does (or raise --product-sample)`,
      );
    },
  },
  {
    id: "POS-07",
    kind: "scenario",
    title: "Position works for paused and deprecated products",
    category: "position",
    level: "reference",
    cites: [contract("§8", "Position works for every status.")],
    failure: "status",
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
    kind: "scenario",
    title: "The product is resolved before the address: unknown slug with a bad address is 404",
    category: "position",
    level: "reference",
    cites: [
      contract(
        "§3",
        "The product is resolved before query validation, since `amount` is checked against the product's decimals.",
      ),
    ],
    failure: "status",
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
    kind: "scenario",
    title: "A position's assets and USD value follow ERC-4626 convertToAssets and the price",
    category: "position",
    level: "reference",
    cites: [
      contract(
        "§2",
        "**Position**: `assets = floor(shares × (total_assets + 1) / (total_supply + 10^δ))` — ERC-4626 `convertToAssets` with OpenZeppelin's virtual shares",
      ),
      contract("§2", "`usd_value = floor(assets × price_usd)` at 2 fractional digits (cents)."),
    ],
    failure: "value",
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
      // Every wrong figure of every position is counted, not only the first.
      const wrong: WrongFigure[] = [];
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
              t.note(
                `${p.slug}: the fixtures hold no USD price for ${record.assetSymbol}; usd_value not compared`,
              );
              continue;
            }
            if (data[field] !== want)
              wrong.push({
                line: `${p.slug}, address=${wallet}: "${field}" should be "${want}", got ${JSON.stringify(data[field])}`,
                ex,
              });
          }
          compared++;
        }
      }
      t.check(compared > 0, "no position was compared");
      failOnWrong(
        t,
        wrong,
        compared,
        "positions",
        "expected: assets by convertToAssets over the vault totals, usd_value = floor(assets × price) at 2 digits",
      );
    },
  },
  {
    id: "POS-10",
    kind: "response",
    title: "Position amounts are consistent: no assets without shares, no USD value without assets",
    category: "position",
    level: "reference",
    cites: [
      contract("§2", "`assets = floor(shares × (total_assets + 1) / (total_supply + 10^δ))`"),
      contract("§2", "`usd_value = floor(assets × price_usd)` at 2 fractional digits (cents)."),
    ],
    failure: "value",
    cost: 1,
    async probe(t: CheckContext) {
      await t.get(positionPath(anyProduct(t).slug, t.randomWallet(10)));
    },
    inspect(ex, judge) {
      const read = positionAmounts(ex);
      if (read === undefined) return;
      judge.applies();
      const { shares, assets, usd_value: usd } = read.amounts;
      const where = `${read.slug}, ${read.wallet}`;
      if (shares === "0")
        judge.check(
          assets === "0",
          "value",
          `${where}: no shares, yet assets ${JSON.stringify(assets)} (convertToAssets(0) = 0)`,
        );
      if (assets === "0")
        judge.check(
          usd === "0",
          "value",
          `${where}: no assets, yet usd_value ${JSON.stringify(usd)} (0 × price = 0)`,
        );
      const key = `${read.slug} ${read.wallet}`;
      const before = judge.memory.get(key) as Record<string, unknown> | undefined;
      if (before !== undefined) {
        const changed = POSITION_AMOUNTS.filter((f) => before[f] !== read.amounts[f]);
        // A live vault moves between two reads: a note, never a failure.
        if (changed.length > 0)
          judge.note(
            `${where}: two reads differ in ${changed.join(", ")} (a moving vault, or an unstable computation)`,
          );
      }
      judge.memory.set(key, read.amounts);
    },
  },
];
