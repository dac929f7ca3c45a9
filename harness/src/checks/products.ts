/**
 * Products (interface.md §2, §4.1–4.2; CONTRACT §1, §2, §3, §8): the list and the single product
 * agree, every field is there with its type, numbers are canonical and the net APY follows the
 * fee formula. Products are taken from what the target lists, never from hard-coded slugs.
 * @module
 */
import { fromBaseUnits, isCanonical } from "../oracle/decimal.js";
import { netApyUnits, RATE_DIGITS } from "../oracle/yield.js";
import { missingSlug } from "./auth.js";
import { contract, GAPS, spec } from "./citations.js";
import {
  type CheckContext,
  isRecord,
  type ListedProduct,
  positionPath,
  productPath,
  yieldPath,
} from "./context.js";
import { fractionDigits } from "./decimal-text.js";
import type { CheckDefinition } from "./definition.js";
import { toChecksumAddress } from "./from-core.js";
import { sortedJson } from "./json-text.js";
import { checkShape, SPEC_METRICS, SPEC_PRODUCT } from "./spec-shapes.js";

const STATUSES = ["active", "paused", "deprecated"];
const ADDRESS_FIELDS = ["wrapper_address", "underlying_vault_address", "asset_address"] as const;
const METRIC_DECIMALS = ["wrapper_total_assets", "underlying_apy", "net_apy_for_user"] as const;

/** The EVM registry of CONTRACT §8 (extendable: an unknown chain is only a note). */
export const EVM_CHAIN_IDS: Readonly<Record<string, number>> = {
  ethereum: 1,
  optimism: 10,
  bsc: 56,
  polygon: 137,
  base: 8453,
  arbitrum: 42161,
  avalanche: 43114,
};

function metricsOf(p: ListedProduct): Record<string, unknown> | undefined {
  return p.metrics ?? undefined;
}

export const PRODUCT_CHECKS: readonly CheckDefinition[] = [
  {
    id: "PRD-01",
    kind: "scenario",
    title: "The product list is a success envelope holding the partner's products",
    category: "products",
    level: "spec",
    cites: [
      spec(
        "§4.1",
        "Response: `{ success: boolean, data: Product[] }`. The list holds all products of the calling partner.",
      ),
      spec("§2", "| slug | string | Product identifier, used in paths. |"),
    ],
    reference: {
      asserts: "ordered by slug",
      cites: [
        contract(
          "§8",
          "The list holds all of the calling partner's products, every status, ordered by `slug`.",
        ),
      ],
    },
    failure: "schema",
    cost: 0,
    async run(t: CheckContext) {
      const ex = t.discovery.exchange;
      const body = t.expectOk(ex, "GET products");
      const data = body["data"];
      t.check(
        Array.isArray(data),
        `"data" should be an array, got ${JSON.stringify(data)?.slice(0, 80)}`,
        ex,
      );
      if (data.length === 0) t.skip("the list is empty: this partner has no product to check");
      const slugs: string[] = [];
      for (const [i, item] of data.entries()) {
        t.check(isRecord(item), `data[${i}] is not an object`, ex);
        t.check(typeof item["slug"] === "string", `data[${i}].slug is not a string`, ex);
        slugs.push(item["slug"]);
      }
      const duplicate = slugs.find((s, i) => slugs.indexOf(s) !== i);
      t.checkWith(
        "value",
        duplicate === undefined,
        `slug "${duplicate}" is listed twice (slugs identify products)`,
        ex,
      );
      if (t.reference) {
        const sorted = [...slugs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const at = slugs.findIndex((s, i) => s !== sorted[i]);
        t.checkWith(
          "value",
          at === -1,
          `the list is not ordered by slug: "${slugs[at]}" comes where "${sorted[at]}" should`,
          ex,
        );
      }
    },
  },
  {
    id: "PRD-02",
    kind: "scenario",
    title: "Every product has the fields of the interface, with their types",
    category: "products",
    level: "spec",
    cites: [
      spec("§2", "| chain_id | integer | Numeric chain id. |"),
      spec("§2", "| wrapper_address | string | 0x-prefixed wrapper contract address. |"),
      spec("§2", "| as_of_date | string, date (YYYY-MM-DD) | Date the metrics refer to. |"),
      spec("§2", "| underlying_apy | string (decimal number) | APY of the underlying vault. |"),
    ],
    tolerates: [GAPS.absentFields],
    reference: {
      asserts:
        "no field absent, latest_metrics an object or null, addresses 0x + 40 hex digits in EIP-55 form",
      cites: [
        contract(
          "§8",
          "Every Product field is always present. `latest_metrics` is `null` until the product has metrics.",
        ),
        contract("§3", "**address**: `0x` + 40 hex digits."),
      ],
    },
    failure: "schema",
    cost: 0,
    async run(t: CheckContext) {
      const ex = t.discovery.exchange;
      for (const p of t.products()) {
        const metrics = p.raw["latest_metrics"];
        const report = checkShape(p.raw, SPEC_PRODUCT, `${p.slug}: `);
        if (metrics === null) {
          const nullMetrics = `${p.slug}: latest_metrics should`;
          report.wrong.splice(
            0,
            report.wrong.length,
            ...report.wrong.filter((w) => !w.startsWith(nullMetrics)),
          );
          if (!t.reference) t.note(`${p.slug}: latest_metrics is null (interface.md shows an object)`);
        } else if (isRecord(metrics)) {
          const inner = checkShape(metrics, SPEC_METRICS, `${p.slug}: latest_metrics.`);
          report.wrong.push(...inner.wrong);
          report.missing.push(...inner.missing);
          report.unknown.push(...inner.unknown);
        }
        t.check(report.wrong.length === 0, report.wrong.join("; "), ex);
        const wrapper = p.raw["wrapper_address"];
        if (wrapper !== undefined || t.reference)
          t.check(
            typeof wrapper === "string" && wrapper.startsWith("0x"),
            `${p.slug}: wrapper_address should be 0x-prefixed, got ${JSON.stringify(wrapper)}`,
            ex,
          );
        if (t.reference) {
          t.check(report.missing.length === 0, `fields absent: ${report.missing.join(", ")}`, ex);
          for (const field of ADDRESS_FIELDS) {
            const value = p.raw[field];
            t.check(
              typeof value === "string" &&
                /^0x[0-9a-fA-F]{40}$/.test(value) &&
                toChecksumAddress(value) === value,
              `${p.slug}: ${field} should be 0x + 40 hex digits in EIP-55 form, got ${JSON.stringify(value)}`,
              ex,
            );
          }
        } else {
          for (const field of report.missing)
            t.note(`${field} is absent (interface.md does not say which fields may be)`);
          for (const field of report.unknown)
            t.note(`${field}: a field interface.md does not name (ignored at level spec)`);
        }
      }
    },
  },
  {
    id: "PRD-03",
    kind: "scenario",
    title: "Each product read by slug agrees with its entry in the list",
    category: "products",
    level: "spec",
    cites: [
      spec("§4.1", "The list holds all products of the calling partner."),
      spec("§4.2", "Response: `{ success: boolean, data: Product }`."),
    ],
    tolerates: [GAPS.absentFields],
    reference: {
      asserts: "equal field for field, none absent from either",
      cites: [contract("§8", "Every Product field is always present.")],
    },
    failure: "value",
    cost: (o) => o.productSample,
    async run(t: CheckContext) {
      const products = t.products().slice(0, t.inputs.plan.productSample);
      for (const p of products) {
        const ex = await t.get(productPath(p.slug));
        const body = t.expectOk(ex, `GET product ${p.slug}`);
        const data = body["data"];
        t.checkWith("schema", isRecord(data), `GET product ${p.slug}: "data" is not an object`, ex);
        if (t.reference) {
          const single = sortedJson(data);
          const listed = sortedJson(p.raw);
          t.check(
            single === listed,
            `GET product ${p.slug} differs from the list entry:\n  list: ${listed}\n  get:  ${single}`,
            ex,
            t.discovery.exchange,
          );
          continue;
        }
        // interface.md leaves open which fields a response may omit, and metrics move over time.
        for (const field of new Set([...Object.keys(p.raw), ...Object.keys(data)])) {
          if (!(field in data) || !(field in p.raw)) {
            t.note(`${p.slug}: ${field} is in ${field in data ? "the product" : "the list"} only`);
            continue;
          }
          const same = sortedJson(data[field]) === sortedJson(p.raw[field]);
          if (field === "latest_metrics") {
            if (!same) t.note(`${p.slug}: latest_metrics changed between the list and the product read`);
            continue;
          }
          t.check(
            same,
            `GET product ${p.slug}: ${field} is ${JSON.stringify(data[field])}, the list says ${JSON.stringify(p.raw[field])}`,
            ex,
            t.discovery.exchange,
          );
        }
      }
    },
  },
  {
    id: "PRD-04",
    kind: "scenario",
    title: "Metrics are canonical decimal strings",
    category: "products",
    level: "reference",
    cites: [
      contract(
        "§1",
        "Every amount, rate and value is a JSON **string** holding a canonical decimal: `^-?(0|[1-9][0-9]*)(\\.[0-9]*[1-9])?$` — no exponent, no `+`, no leading zeros, no trailing fractional zeros, never `-0`.",
      ),
      contract("§1", "At most 18 fractional digits."),
    ],
    failure: "value",
    cost: 0,
    async run(t: CheckContext) {
      const ex = t.discovery.exchange;
      let seen = 0;
      for (const p of t.products()) {
        const m = metricsOf(p);
        if (m === undefined) continue;
        seen++;
        for (const field of METRIC_DECIMALS) {
          const value = m[field];
          t.check(
            isCanonical(value),
            `${p.slug}: latest_metrics.${field} should be a canonical decimal string (no exponent, no padding zeros), got ${JSON.stringify(value)}`,
            ex,
          );
          const max = field === "wrapper_total_assets" ? (p.assetDecimals ?? 0) : RATE_DIGITS;
          t.check(
            fractionDigits(value) <= max,
            `${p.slug}: latest_metrics.${field} has ${fractionDigits(value)} fractional digits, at most ${max} allowed`,
            ex,
          );
        }
        t.check(
          !String(m["wrapper_total_assets"]).startsWith("-"),
          `${p.slug}: wrapper_total_assets is negative`,
          ex,
        );
      }
      if (seen === 0) t.skip("no listed product has metrics");
    },
  },
  {
    id: "PRD-05",
    kind: "scenario",
    title: "net_apy_for_user follows the performance-fee formula",
    category: "products",
    level: "reference",
    cites: [
      contract(
        "§2",
        "`net_apy_for_user = a × (10000 − f) / 10000` when `a > 0`; `= a` when `a ≤ 0` (no fee on a loss). Truncated toward zero to 18 fractional digits.",
      ),
    ],
    failure: "value",
    cost: 0,
    async run(t: CheckContext) {
      const ex = t.discovery.exchange;
      let seen = 0;
      for (const p of t.products()) {
        const m = metricsOf(p);
        if (m === undefined || typeof m["underlying_apy"] !== "string") continue;
        t.checkWith(
          "schema",
          p.serviceFeeBps !== undefined && p.partnerFeeBps !== undefined,
          `${p.slug}: fees are not integers`,
          ex,
        );
        let expected: string;
        try {
          expected = fromBaseUnits(
            netApyUnits(m["underlying_apy"], p.serviceFeeBps, p.partnerFeeBps),
            RATE_DIGITS,
          );
        } catch (error) {
          t.fail(`${p.slug}: cannot compute the net APY: ${(error as Error).message}`, ex);
        }
        seen++;
        t.check(
          m["net_apy_for_user"] === expected,
          `${p.slug}: net_apy_for_user should be ${expected} = ${m["underlying_apy"]} × (10000 − ${p.serviceFeeBps} − ${p.partnerFeeBps}) / 10000, got ${JSON.stringify(m["net_apy_for_user"])}`,
          ex,
        );
      }
      if (seen === 0) t.skip("no listed product has metrics");
    },
  },
  {
    id: "PRD-06",
    kind: "scenario",
    title: "An unknown slug is not found",
    category: "products",
    level: "spec",
    cites: [spec("§4.2", "Path parameter: `slug` (string, required).")],
    tolerates: [GAPS.statusCodes],
    reference: {
      asserts: "404 product_not_found",
      cites: [contract("§3", "**slug**: unknown, or another partner's product → `404 product_not_found`")],
    },
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const ex = await t.get(productPath(missingSlug(t)));
      t.expectRefused(ex, "GET an unknown product", { status: 404, code: "product_not_found" });
    },
  },
  {
    id: "PRD-07",
    kind: "scenario",
    title: "Another partner's product is neither listed nor readable",
    category: "products",
    level: "spec",
    cites: [
      spec("§1", "The partner is the authenticated caller."),
      spec("§1", "A partner can list its products and read one product, including its latest metrics."),
      spec("§4.1", "The list holds all products of the calling partner."),
    ],
    tolerates: [GAPS.statusCodes],
    reference: {
      asserts: "404 product_not_found on get, position and yield-calc, never 403",
      cites: [
        contract(
          "§3",
          "**slug**: unknown, or another partner's product → `404 product_not_found` (never 403: do not reveal that another partner's product exists).",
        ),
      ],
    },
    failure: "state",
    cost: 3,
    needs: ["foreignSlug"],
    async run(t: CheckContext) {
      const slug = t.inputs.foreignSlug!;
      const listed = t.products().some((p) => p.slug === slug);
      t.check(!listed, `the list holds "${slug}", another partner's product`, t.discovery.exchange);
      const get = await t.get(productPath(slug));
      t.expectRefused(get, `GET another partner's product ${slug}`, {
        status: 404,
        code: "product_not_found",
      });
      const position = await t.get(positionPath(slug, t.randomWallet()));
      t.expectRefused(position, "position in another partner's product", {
        status: 404,
        code: "product_not_found",
      });
      const quote = await t.get(yieldPath(slug, "1"));
      t.expectRefused(quote, "yield-calc of another partner's product", {
        status: 404,
        code: "product_not_found",
      });
    },
  },
  {
    id: "PRD-08",
    kind: "scenario",
    title: "status is active, paused or deprecated",
    category: "products",
    level: "reference",
    cites: [
      contract(
        "§8",
        "`status`: `active`, `paused` (readable, no new deposits) or `deprecated` (withdraw only; terminal).",
      ),
    ],
    failure: "value",
    cost: 0,
    async run(t: CheckContext) {
      for (const p of t.products()) {
        t.check(
          p.status !== undefined && STATUSES.includes(p.status),
          `${p.slug}: status should be one of ${STATUSES.join(", ")}, got ${JSON.stringify(p.raw["status"])}`,
          t.discovery.exchange,
        );
      }
    },
  },
  {
    id: "PRD-09",
    kind: "scenario",
    title: "chain and chain_id are a pair of the EVM registry",
    category: "products",
    level: "reference",
    cites: [
      contract(
        "§8",
        "`chain` / `chain_id` pairs come from the EVM registry: ethereum 1, optimism 10, bsc 56, polygon 137, base 8453, arbitrum 42161, avalanche 43114 (extendable).",
      ),
    ],
    failure: "value",
    cost: 0,
    async run(t: CheckContext) {
      for (const p of t.products()) {
        const chain = p.raw["chain"];
        const id = p.raw["chain_id"];
        if (typeof chain !== "string")
          t.failWith("schema", `${p.slug}: chain is not a string`, t.discovery.exchange);
        const expected = EVM_CHAIN_IDS[chain];
        if (expected === undefined) {
          t.note(`${p.slug}: chain "${chain}" is not in the registry this harness knows (it is extendable)`);
          continue;
        }
        t.check(
          id === expected,
          `${p.slug}: ${chain} has chain_id ${expected}, got ${JSON.stringify(id)}`,
          t.discovery.exchange,
        );
      }
    },
  },
  {
    id: "PRD-10",
    kind: "scenario",
    title: "Fees are basis points within 0–10000 in total; asset_decimals a uint8",
    category: "products",
    level: "reference",
    cites: [
      contract(
        "§2",
        "Fees must satisfy `0 ≤ s`, `0 ≤ p`, `f ≤ 10000`; a product that breaks this is refused at load time, not served.",
      ),
    ],
    failure: "value",
    cost: 0,
    async run(t: CheckContext) {
      for (const p of t.products()) {
        const s = p.serviceFeeBps;
        const f = p.partnerFeeBps;
        t.check(
          s !== undefined && f !== undefined && s >= 0 && f >= 0 && s + f <= 10000,
          `${p.slug}: service_fee_bps ${JSON.stringify(p.raw["service_fee_bps"])} and partner_fee_bps ${JSON.stringify(p.raw["partner_fee_bps"])} must be integers ≥ 0 summing to at most 10000`,
          t.discovery.exchange,
        );
        const d = p.assetDecimals;
        t.check(
          d !== undefined && d >= 0 && d <= 255,
          `${p.slug}: asset_decimals should be an integer from 0 to 255 (ERC-20 decimals() is a uint8), got ${JSON.stringify(p.raw["asset_decimals"])}`,
          t.discovery.exchange,
        );
      }
    },
  },
];
