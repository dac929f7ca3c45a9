/**
 * Response schemas. At level `reference` every body must validate against the core's zod schemas
 * (strict: an unknown field fails). At level `spec` against the shapes of interface.md, where an
 * unknown field is only a warning (clients ignore unknown fields, CONTRACT §9).
 * @module
 */
import {
  EventAck,
  PositionResponse,
  Problem,
  ProductListResponse,
  ProductResponse,
  YieldCalculationResponse,
} from "@partner-yield/core";
import type { z } from "zod";
import type { Exchange } from "../http/client.js";
import {
  type CheckContext,
  EVENTS_PATH,
  isRecord,
  PRODUCTS_PATH,
  positionPath,
  productPath,
  yieldPath,
} from "./context.js";
import {
  checkShape,
  hasSpecType,
  type ShapeReport,
  SPEC_EVENT_ACK,
  SPEC_METRICS,
  SPEC_POSITION,
  SPEC_PRODUCT,
  SPEC_YIELD,
} from "./spec-shapes.js";
import type { CheckDefinition, Level } from "./types.js";

export type Route = "list" | "product" | "position" | "yield" | "event";

/** Which endpoint a recorded request went to. */
export function routeOf(method: string, path: string): Route | undefined {
  const bare = path.split("?")[0]!;
  if (method === "POST" && bare === EVENTS_PATH) return "event";
  if (method !== "GET") return undefined;
  if (bare === PRODUCTS_PATH) return "list";
  const rest = bare.startsWith(`${PRODUCTS_PATH}/`) ? bare.slice(PRODUCTS_PATH.length + 1).split("/") : [];
  if (rest.length === 1 && rest[0] !== "") return "product";
  if (rest.length === 2 && rest[1] === "position") return "position";
  if (rest.length === 2 && rest[1] === "yield-calc") return "yield";
  return undefined;
}

const REFERENCE_SCHEMAS: Readonly<Record<Route, z.ZodType>> = {
  list: ProductListResponse,
  product: ProductResponse,
  position: PositionResponse,
  yield: YieldCalculationResponse,
  event: EventAck,
};

export interface Validation {
  readonly errors: string[];
  readonly warnings: string[];
}

/** Validates a 200 body of `route` at `level`. */
export function validateSuccess(level: Level, route: Route, body: unknown): Validation {
  if (level === "reference") {
    const result = REFERENCE_SCHEMAS[route].safeParse(body);
    return {
      errors: result.success
        ? []
        : result.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`),
      warnings: [],
    };
  }
  const out: Validation = { errors: [], warnings: [] };
  if (!isRecord(body)) return { errors: ["the body is not a JSON object"], warnings: [] };
  if (route === "event") {
    absorb(out, checkShape(body, SPEC_EVENT_ACK), true);
    return out;
  }
  if (!hasSpecType(body["success"], "boolean"))
    out.errors.push(`success should be a boolean, got ${JSON.stringify(body["success"])}`);
  for (const field of Object.keys(body)) {
    if (field !== "success" && field !== "data")
      out.warnings.push(`${field}: a field interface.md does not name`);
  }
  const data = body["data"];
  if (route === "list") {
    if (!Array.isArray(data)) out.errors.push("data should be an array");
    else for (const [i, item] of data.entries()) specProduct(out, item, `data[${i}].`);
  } else if (route === "product") specProduct(out, data, "data.");
  else if (!isRecord(data)) out.errors.push("data should be an object");
  else absorb(out, checkShape(data, route === "position" ? SPEC_POSITION : SPEC_YIELD, "data."), true);
  return out;
}

function specProduct(out: Validation, item: unknown, path: string): void {
  if (!isRecord(item)) {
    out.errors.push(`${path.slice(0, -1)} should be an object`);
    return;
  }
  const metrics = item["latest_metrics"];
  const report = checkShape(item, SPEC_PRODUCT, path);
  if (metrics === null) {
    // interface.md shows an object; absent or null is one of its gaps (which fields may be absent).
    const filtered = report.wrong.filter((w) => !w.startsWith(`${path}latest_metrics `));
    report.wrong.splice(0, report.wrong.length, ...filtered);
    out.warnings.push(`${path}latest_metrics is null`);
  } else if (isRecord(metrics))
    absorb(out, checkShape(metrics, SPEC_METRICS, `${path}latest_metrics.`), false);
  absorb(out, report, false);
}

/** Wrong types fail; missing fields fail when `missingFails`, else warn; unknown fields warn. */
function absorb(out: Validation, report: ShapeReport, missingFails: boolean): void {
  out.errors.push(...report.wrong);
  for (const field of report.missing) (missingFails ? out.errors : out.warnings).push(`${field} is absent`);
  for (const field of report.unknown) out.warnings.push(`${field}: a field interface.md does not name`);
}

function validateExchange(t: CheckContext, ex: Exchange, route: Route): void {
  const status = t.status(ex);
  if (status !== 200) t.fail(`${ex.request.method} ${ex.request.path}: expected 200, got ${status}`, ex);
  const result = validateSuccess(t.level, route, t.json(ex));
  t.check(
    result.errors.length === 0,
    `${ex.request.method} ${ex.request.path}: ${result.errors.join("; ")}`,
    ex,
  );
  for (const warning of result.warnings) t.warn(`${route}: ${warning}`);
}

export const SCHEMA_CHECKS: readonly CheckDefinition[] = [
  {
    id: "SCH-01",
    title: "The product list validates against the schema",
    category: "schema",
    level: "spec",
    source: "interface.md §2, §4.1",
    reference: "the core's ProductListResponse, strict (CONTRACT §1, §8)",
    cost: 0,
    async run(t: CheckContext) {
      validateExchange(t, t.discovery.exchange, "list");
    },
  },
  {
    id: "SCH-02",
    title: "A product validates against the schema",
    category: "schema",
    level: "spec",
    source: "interface.md §2, §4.2",
    reference: "the core's ProductResponse, strict",
    cost: 1,
    async run(t: CheckContext) {
      validateExchange(t, await t.get(productPath(t.products()[0]!.slug)), "product");
    },
  },
  {
    id: "SCH-03",
    title: "A position validates against the schema",
    category: "schema",
    level: "spec",
    source: "interface.md §2, §4.3",
    reference: "the core's PositionResponse, strict",
    cost: 1,
    async run(t: CheckContext) {
      const wallet = t.inputs.wallet ?? t.randomWallet();
      validateExchange(t, await t.get(positionPath(t.products()[0]!.slug, wallet)), "position");
    },
  },
  {
    id: "SCH-04",
    title: "A yield calculation validates against the schema",
    category: "schema",
    level: "spec",
    source: "interface.md §2, §4.4",
    reference: "the core's YieldCalculationResponse, strict",
    cost: 1,
    async run(t: CheckContext) {
      const product = t.product(
        (p) => p.status === "active" && isRecord(p.metrics),
        "active product with metrics",
      );
      validateExchange(t, await t.get(yieldPath(product.slug, "1")), "yield");
    },
  },
  {
    id: "SCH-05",
    title: "An event acknowledgement validates against the schema",
    category: "schema",
    level: "spec",
    source: "interface.md §4.5",
    reference: "the core's EventAck, strict",
    cost: 1,
    needs: ["signingSecret"],
    async run(t: CheckContext) {
      validateExchange(t, await t.postEvent({ body: t.newEvent() }), "event");
    },
  },
  {
    id: "SCH-06",
    title: "Every response of the run validates against the schema of its endpoint",
    category: "schema",
    level: "spec",
    source: "interface.md §2, §4",
    reference: "core schemas, errors against Problem (CONTRACT §6)",
    cost: 0,
    async run(t: CheckContext) {
      let seen = 0;
      for (const ex of t.allExchanges) {
        const r = ex.response;
        if (r === undefined || ex.request.method === "HEAD") continue;
        const route = routeOf(ex.request.method, ex.request.path);
        if (r.status === 200 && route !== undefined) {
          let body: unknown;
          try {
            body = JSON.parse(r.text);
          } catch {
            t.fail(`${ex.request.method} ${ex.request.path} → 200 is not JSON`, ex);
          }
          const result = validateSuccess(t.level, route, body);
          t.check(
            result.errors.length === 0,
            `${ex.request.method} ${ex.request.path}: ${result.errors.join("; ")}`,
            ex,
          );
          for (const warning of result.warnings) t.warn(`${route}: ${warning}`);
          seen++;
        } else if (r.status >= 400 && t.reference) {
          let body: unknown;
          try {
            body = JSON.parse(r.text);
          } catch {
            t.fail(`${ex.request.method} ${ex.request.path} → ${r.status}: the error body is not JSON`, ex);
          }
          const result = Problem.safeParse(body);
          t.check(
            result.success,
            `${ex.request.method} ${ex.request.path} → ${r.status}: not a problem body (${result.error?.issues[0]?.message ?? ""})`,
            ex,
          );
          seen++;
        }
      }
      if (seen === 0) t.skip("no response was recorded before this check (run more checks with it)");
    },
  },
];
