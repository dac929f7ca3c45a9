/**
 * Response schemas. At level `reference` every body must validate against the core's zod schemas
 * (strict: an unknown field fails). At level `spec` against the shapes of interface.md, where an
 * unknown field is only a warning (clients ignore unknown fields, CONTRACT §9).
 * @module
 */
import type { z } from "zod";
import type { Exchange } from "../http/client.js";
import { contract, GAPS, spec } from "./citations.js";
import {
  bodyOf,
  type CheckContext,
  EVENTS_PATH,
  excerpt,
  isRecord,
  isRefusal,
  PRODUCTS_PATH,
  positionPath,
  productPath,
  yieldPath,
} from "./context.js";
import type { CheckDefinition } from "./definition.js";
import {
  EventAck,
  PositionResponse,
  Problem,
  ProductListResponse,
  ProductResponse,
  YieldCalculationResponse,
} from "./from-core.js";
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
import type { Level } from "./types.js";

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

/**
 * Validates one success response of `route`. At level `spec` a refusal of an input whose outcome
 * interface.md does not show (`open`) skips the check with the reason instead.
 */
function validateExchange(t: CheckContext, ex: Exchange, route: Route, open?: string): void {
  const status = t.status(ex);
  if (open !== undefined && !t.reference && isRefusal(ex)) t.skip(`${open} (HTTP ${status})`);
  if (status >= 500)
    t.failWith("server_error", `${ex.request.method} ${ex.request.path}: server error ${status}`, ex);
  if (status !== 200)
    t.failWith("status", `${ex.request.method} ${ex.request.path}: expected 200, got ${status}`, ex);
  const result = validateSuccess(t.level, route, t.json(ex));
  t.check(
    result.errors.length === 0,
    `${ex.request.method} ${ex.request.path}: ${result.errors.join("; ")}`,
    ex,
  );
  for (const warning of result.warnings) t.note(`${route}: ${warning}`);
}

const REFERENCE_SCHEMAS_CITE = contract(
  "§1",
  "Every amount, rate and value is a JSON **string** holding a canonical decimal",
);

export const SCHEMA_CHECKS: readonly CheckDefinition[] = [
  {
    id: "SCH-01",
    kind: "scenario",
    title: "The product list validates against the schema",
    category: "schema",
    level: "spec",
    cites: [spec("§4.1", "Response: `{ success: boolean, data: Product[] }`.")],
    tolerates: [GAPS.absentFields],
    reference: {
      asserts: "the core's ProductListResponse, strict",
      cites: [REFERENCE_SCHEMAS_CITE, contract("§8", "Every Product field is always present.")],
    },
    failure: "schema",
    cost: 0,
    async run(t: CheckContext) {
      validateExchange(t, t.discovery.exchange, "list");
    },
  },
  {
    id: "SCH-02",
    kind: "scenario",
    title: "A product validates against the schema",
    category: "schema",
    level: "spec",
    cites: [spec("§4.2", "Response: `{ success: boolean, data: Product }`.")],
    tolerates: [GAPS.absentFields],
    reference: { asserts: "the core's ProductResponse, strict", cites: [REFERENCE_SCHEMAS_CITE] },
    failure: "schema",
    cost: 1,
    async run(t: CheckContext) {
      validateExchange(t, await t.get(productPath(t.products()[0]!.slug)), "product");
    },
  },
  {
    id: "SCH-03",
    kind: "scenario",
    title: "A position validates against the schema",
    category: "schema",
    level: "spec",
    cites: [spec("§4.3", "Response: `{ success: boolean, data: Position }`.")],
    tolerates: [GAPS.emptyWallet],
    reference: {
      asserts: "the core's PositionResponse, strict",
      cites: [
        REFERENCE_SCHEMAS_CITE,
        contract(
          "§2",
          'A wallet that holds nothing gets **200** with `shares`, `assets` and `usd_value` all `"0"`',
        ),
      ],
    },
    failure: "schema",
    cost: 1,
    async run(t: CheckContext) {
      const wallet = t.inputs.wallet ?? t.randomWallet();
      const slug = t.products()[0]!.slug;
      validateExchange(
        t,
        await t.get(positionPath(slug, wallet)),
        "position",
        `the target refused the position of ${wallet} in ${slug}; what a wallet that holds nothing gets is not shown (interface.md §4.3)`,
      );
    },
  },
  {
    id: "SCH-04",
    kind: "scenario",
    title: "A yield calculation validates against the schema",
    category: "schema",
    level: "spec",
    cites: [spec("§4.4", "Response: `{ success: boolean, data: Yield calculation }`.")],
    tolerates: [GAPS.bounds],
    reference: { asserts: "the core's YieldCalculationResponse, strict", cites: [REFERENCE_SCHEMAS_CITE] },
    failure: "schema",
    cost: 1,
    async run(t: CheckContext) {
      const product = t.product(
        (p) => p.status === "active" && isRecord(p.metrics),
        "active product with metrics",
      );
      validateExchange(
        t,
        await t.get(yieldPath(product.slug, "100")),
        "yield",
        `${product.slug} refused the amount 100; bounds on amount are not shown (interface.md §8)`,
      );
    },
  },
  {
    id: "SCH-05",
    kind: "scenario",
    title: "An event acknowledgement validates against the schema",
    category: "schema",
    level: "spec",
    cites: [
      spec("§4.5", "Response (HTTP 200): `{ success: boolean, event_id: integer, duplicate: boolean }`."),
    ],
    tolerates: [GAPS.eventData],
    reference: {
      asserts: "the core's EventAck, strict",
      cites: [
        contract(
          "§5",
          "new key → the event is stored durably, then `200 {success:true, event_id, duplicate:false}`.",
        ),
      ],
    },
    failure: "schema",
    cost: 1,
    needs: ["signingSecret"],
    async run(t: CheckContext) {
      const ex = await t.postEvent({ body: t.newEvent() });
      if (t.refusedAsBadSignature(ex))
        t.failWith("status", "a correctly signed event was refused exactly as a wrong signature is", ex);
      validateExchange(
        t,
        ex,
        "event",
        "the target refused a well-formed, correctly signed event; the content of data is not shown (interface.md §6)",
      );
    },
  },
  {
    id: "SCH-06",
    kind: "response",
    title: "Every response of the run validates against the schema of its endpoint",
    category: "schema",
    level: "spec",
    cites: [
      spec(
        "§1",
        "Successful responses carry a boolean `success` and a `data` member, except the event endpoint (see Endpoints).",
      ),
      spec("§4", "Successful responses are HTTP 200 with `application/json`."),
    ],
    tolerates: [GAPS.absentFields, GAPS.errorBody],
    reference: {
      asserts: "core schemas, strict; errors against the problem schema",
      cites: [
        REFERENCE_SCHEMAS_CITE,
        contract(
          "§6",
          "Every error is `application/problem+json` (RFC 9457) with the success envelope's flag:",
        ),
      ],
    },
    failure: "schema",
    cost: 0,
    inspect(ex, judge) {
      const r = ex.response;
      if (r === undefined || ex.request.method === "HEAD") return;
      const route = routeOf(ex.request.method, ex.request.path);
      const what = `${ex.request.method} ${excerpt(ex.request.path, 80)} → ${r.status}`;
      if (r.status === 200 && route !== undefined) {
        judge.applies();
        const body = bodyOf(ex);
        if (body === undefined) {
          judge.fail("not_json", `${what} is not JSON`);
          return;
        }
        const result = validateSuccess(judge.level, route, body);
        if (result.errors.length > 0) judge.fail("schema", `${what}: ${result.errors.join("; ")}`);
        for (const warning of result.warnings) judge.note(`${route}: ${warning}`);
      } else if (r.status >= 400 && judge.reference) {
        judge.applies();
        const result = Problem.safeParse(bodyOf(ex));
        if (!result.success)
          judge.fail(
            "schema",
            `${what}: not a problem body (${result.error.issues[0]?.message ?? "not JSON"})`,
          );
      }
    },
  },
];
