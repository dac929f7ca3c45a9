/**
 * Products (interface.md §2, §4.1–4.2; CONTRACT §1, §2, §3, §8): the list and the single product
 * agree, every field is there with its type, numbers are canonical and the net APY follows the
 * fee formula. Products are taken from what the target lists, never from hard-coded slugs.
 * @module
 */
import { canonicalJson, EVM_CHAINS, parseAddress } from "@partner-yield/core";
import {
  formatUnits,
  isCanonicalDecimal,
  netApy,
  parseDecimal,
  RATE_DECIMALS,
  unwrap,
} from "@partner-yield/core/math";
import { missingSlug } from "./auth.js";
import {
  type CheckContext,
  isRecord,
  type ListedProduct,
  positionPath,
  productPath,
  yieldPath,
} from "./context.js";
import { fractionDigits } from "./decimal-text.js";
import { checkShape, SPEC_METRICS, SPEC_PRODUCT } from "./spec-shapes.js";
import type { CheckDefinition } from "./types.js";

const STATUSES = ["active", "paused", "deprecated"];
const ADDRESS_FIELDS = ["wrapper_address", "underlying_vault_address", "asset_address"] as const;
const METRIC_DECIMALS = ["wrapper_total_assets", "underlying_apy", "net_apy_for_user"] as const;

function metricsOf(p: ListedProduct): Record<string, unknown> | undefined {
  return p.metrics ?? undefined;
}

export const PRODUCT_CHECKS: readonly CheckDefinition[] = [
  {
    id: "PRD-01",
    title: "The product list is a success envelope holding the partner's products",
    category: "products",
    level: "spec",
    source: "interface.md §1, §4.1",
    reference: "ordered by slug (CONTRACT §8)",
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
      t.check(data.length > 0, "the list is empty: the partner should have at least one product to test", ex);
      const slugs: string[] = [];
      for (const [i, item] of data.entries()) {
        t.check(isRecord(item), `data[${i}] is not an object`, ex);
        t.check(typeof item["slug"] === "string", `data[${i}].slug is not a string`, ex);
        slugs.push(item["slug"]);
      }
      const duplicate = slugs.find((s, i) => slugs.indexOf(s) !== i);
      t.check(duplicate === undefined, `slug "${duplicate}" is listed twice`, ex);
      if (t.reference) {
        const sorted = [...slugs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const at = slugs.findIndex((s, i) => s !== sorted[i]);
        t.check(
          at === -1,
          `the list is not ordered by slug: "${slugs[at]}" comes where "${sorted[at]}" should`,
          ex,
        );
      }
    },
  },
  {
    id: "PRD-02",
    title: "Every product has every field of the interface, with its type",
    category: "products",
    level: "spec",
    source: "interface.md §2 (Product, latest_metrics)",
    reference:
      "no field absent, latest_metrics an object or null, addresses 0x + 40 hex in EIP-55 form (CONTRACT §3, §8)",
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
          if (!t.reference) t.warn(`${p.slug}: latest_metrics is null (interface.md shows an object)`);
        } else if (isRecord(metrics)) {
          const inner = checkShape(metrics, SPEC_METRICS, `${p.slug}: latest_metrics.`);
          report.wrong.push(...inner.wrong);
          report.missing.push(...inner.missing);
          report.unknown.push(...inner.unknown);
        }
        t.check(report.wrong.length === 0, report.wrong.join("; "), ex);
        const wrapper = p.raw["wrapper_address"];
        t.check(
          typeof wrapper === "string" && wrapper.startsWith("0x"),
          `${p.slug}: wrapper_address should be 0x-prefixed, got ${JSON.stringify(wrapper)}`,
          ex,
        );
        if (t.reference) {
          t.check(report.missing.length === 0, `fields absent: ${report.missing.join(", ")}`, ex);
          for (const field of ADDRESS_FIELDS) {
            const value = p.raw[field];
            const parsed = typeof value === "string" ? parseAddress(value) : undefined;
            t.check(
              parsed?.ok === true && parsed.value === value,
              `${p.slug}: ${field} should be 0x + 40 hex digits in EIP-55 form, got ${JSON.stringify(value)}`,
              ex,
            );
          }
        } else {
          for (const field of report.missing)
            t.warn(`${field} is absent (interface.md does not say which may be)`);
        }
        for (const field of report.unknown) {
          if (!t.reference) t.warn(`${field}: a field interface.md does not name (ignored at level spec)`);
        }
      }
    },
  },
  {
    id: "PRD-03",
    title: "Each product read by slug equals its entry in the list",
    category: "products",
    level: "spec",
    source: "interface.md §4.1, §4.2",
    cost: (o) => o.productSample,
    async run(t: CheckContext) {
      const products = t.products().slice(0, t.inputs.plan.productSample);
      for (const p of products) {
        const ex = await t.get(productPath(p.slug));
        const body = t.expectOk(ex, `GET product ${p.slug}`);
        t.check(isRecord(body["data"]), `GET product ${p.slug}: "data" is not an object`, ex);
        const single = unwrap(canonicalJson(body["data"]));
        const listed = unwrap(canonicalJson(p.raw));
        t.check(
          single === listed,
          `GET product ${p.slug} differs from the list entry:\n  list: ${listed}\n  get:  ${single}`,
          ex,
          t.discovery.exchange,
        );
      }
    },
  },
  {
    id: "PRD-04",
    title: "Metrics are canonical decimal strings",
    category: "products",
    level: "reference",
    source: "CONTRACT §1",
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
            typeof value === "string" && isCanonicalDecimal(value),
            `${p.slug}: latest_metrics.${field} should be a canonical decimal string (no exponent, no padding zeros), got ${JSON.stringify(value)}`,
            ex,
          );
          const max = field === "wrapper_total_assets" ? (p.assetDecimals ?? 0) : RATE_DECIMALS;
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
    title: "net_apy_for_user follows the performance-fee formula",
    category: "products",
    level: "reference",
    source: "CONTRACT §2",
    cost: 0,
    async run(t: CheckContext) {
      const ex = t.discovery.exchange;
      let seen = 0;
      for (const p of t.products()) {
        const m = metricsOf(p);
        if (m === undefined || typeof m["underlying_apy"] !== "string") continue;
        t.check(
          p.serviceFeeBps !== undefined && p.partnerFeeBps !== undefined,
          `${p.slug}: fees are not integers`,
          ex,
        );
        let expected: string;
        try {
          const apy = unwrap(parseDecimal(m["underlying_apy"], RATE_DECIMALS));
          expected = formatUnits(netApy(apy, p.serviceFeeBps, p.partnerFeeBps), RATE_DECIMALS);
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
    title: "An unknown slug is not found",
    category: "products",
    level: "spec",
    source: "interface.md §4.2",
    reference: "404 product_not_found (CONTRACT §3)",
    cost: 1,
    async run(t: CheckContext) {
      const ex = await t.get(productPath(missingSlug(t)));
      t.expectRefused(ex, "GET an unknown product", { status: 404, code: "product_not_found" });
    },
  },
  {
    id: "PRD-07",
    title: "Another partner's product is neither listed nor readable",
    category: "products",
    level: "spec",
    source: "interface.md §1, §4.1",
    reference: "404 product_not_found on get, position and yield-calc, never 403 (CONTRACT §3)",
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
      t.expectRefused(position, `position in another partner's product`, {
        status: 404,
        code: "product_not_found",
      });
      const quote = await t.get(yieldPath(slug, "1"));
      t.expectRefused(quote, `yield-calc of another partner's product`, {
        status: 404,
        code: "product_not_found",
      });
    },
  },
  {
    id: "PRD-08",
    title: "status is active, paused or deprecated",
    category: "products",
    level: "reference",
    source: "CONTRACT §8",
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
    title: "chain and chain_id are a pair of the EVM registry",
    category: "products",
    level: "reference",
    source: "CONTRACT §8",
    cost: 0,
    async run(t: CheckContext) {
      for (const p of t.products()) {
        const chain = p.raw["chain"];
        const id = p.raw["chain_id"];
        if (typeof chain !== "string") t.fail(`${p.slug}: chain is not a string`, t.discovery.exchange);
        const expected = EVM_CHAINS[chain];
        if (expected === undefined) {
          t.warn(`${p.slug}: chain "${chain}" is not in the registry this harness knows (it is extendable)`);
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
    title: "Fees are basis points within 0–10000 in total, decimals within 0–36",
    category: "products",
    level: "reference",
    source: "CONTRACT §2",
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
          d !== undefined && d >= 0 && d <= 36,
          `${p.slug}: asset_decimals should be an integer from 0 to 36, got ${JSON.stringify(p.raw["asset_decimals"])}`,
          t.discovery.exchange,
        );
      }
    },
  },
];
