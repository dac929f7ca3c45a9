/**
 * Deployments that resolve interface.md's open questions ("not shown") their own way: behaviour
 * interface.md allows but our contract does not choose. Level `spec` must pass each of them, and
 * level `reference` must fail each (the checks in `failsAtReference`): the harness's own tests run
 * both, one alternative at a time and all of them together. Each cites the line of interface.md
 * that leaves the behaviour open.
 * @module
 */
import { type PartnerApi, type PartnerApiHandler, signBody } from "@partner-yield/core";
import { formatUnits, parseDecimal, unwrap } from "@partner-yield/core/math";
import { GAPS, spec } from "../checks/citations.js";
import type { Citation } from "../checks/types.js";
import {
  codeOf,
  decoder,
  dropHeaders,
  EVENTS,
  type FaultContext,
  intercept,
  json,
  PRODUCTS,
  problem,
  query,
  rewriteJson,
  rewriteQuote,
  route,
  smallBody,
  withBytes,
  withHeader,
  withQuery,
} from "./interceptors.js";

export interface Alternative {
  /** kebab-case, stable. */
  readonly id: string;
  readonly description: string;
  /** The line of interface.md that leaves this behaviour open. */
  readonly allowedBy: Citation;
  /** Checks that must fail against it at level `reference` (each of them). */
  readonly failsAtReference: readonly string[];
  wrap(api: PartnerApi, context: FaultContext): PartnerApiHandler;
}

/** A well-formed amount's value as digits over 10^scale (for bounds), or undefined. */
function amountValue(text: string): { units: bigint; scale: number } | undefined {
  const match = /^([0-9]+)(?:\.([0-9]+))?$/.exec(text);
  if (match === null) return undefined;
  const fraction = match[2] ?? "";
  return { units: BigInt(match[1]! + fraction), scale: fraction.length };
}

/** Half-up rounding of a figure at `decimals` digits to 2 (cents). */
function toCents(text: string, decimals: number): string {
  if (decimals <= 2) return text;
  const units = unwrap(parseDecimal(text, decimals));
  const step = 10n ** BigInt(decimals - 2);
  const shifted = units + step / 2n;
  const cents = shifted >= 0n ? shifted / step : -((-shifted + step - 1n) / step);
  return formatUnits(cents, 2);
}

const REQUIRED_DATA: Readonly<Record<string, string>> = {
  "partner.user.kyc_updated": "kyc_status",
  "partner.reconciliation.confirmed": "reconciliation_id",
};

export const ALTERNATIVES: readonly Alternative[] = [
  {
    id: "empty-wallet-404",
    description: "a wallet that holds nothing in a product gets 404 instead of zeros",
    allowedBy: GAPS.emptyWallet,
    failsAtReference: ["POS-01"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        if (route(req).leaf !== "position" || res.status !== 200) return res;
        const body = json(res) as { data: { shares: string } };
        return body.data.shares === "0"
          ? problem(404, "position_not_found", "this wallet holds nothing here")
          : res;
      }),
  },
  {
    id: "other-status-codes",
    description: "failed authentication and bad signatures are 403, invalid input 422",
    allowedBy: GAPS.statusCodes,
    failsAtReference: ["AUTH-01", "EVT-05", "YLD-05"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        const code = codeOf(res);
        const status =
          res.status === 401
            ? 403
            : res.status === 400 && code !== undefined && /^invalid_(amount|address|parameter)$/.test(code)
              ? 422
              : res.status;
        if (status === res.status) return res;
        return rewriteJson({ ...res, status }, (body) => ({ ...body, status }));
      }),
  },
  {
    id: "error-not-problem-json",
    description:
      'errors are application/json {"success": false, "error": {"code", "message"}}, not problem+json',
    allowedBy: GAPS.errorBody,
    failsAtReference: ["ERR-01", "AUTH-01"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        if (res.status < 400 || res.body === null) return res;
        const problemBody = json(res) as { detail?: string } | undefined;
        return {
          status: res.status,
          headers: { ...res.headers, "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify({
            success: false,
            error: { code: codeOf(res) ?? "error", message: problemBody?.detail ?? "refused" },
          }),
        };
      }),
  },
  {
    id: "rate-limit-headers-missing",
    description: "responses carry no RateLimit headers",
    allowedBy: GAPS.limitResponse,
    failsAtReference: ["RL-01"],
    wrap: (api) =>
      intercept(api, async (req, next) => dropHeaders(await next(req), "ratelimit", "ratelimit-policy")),
  },
  {
    id: "yield-rounded-to-cents",
    description: "annual_yield and monthly_yield are rounded half-up to 2 decimals",
    allowedBy: GAPS.formula,
    failsAtReference: ["YLD-03"],
    wrap: (api, c) =>
      intercept(api, async (req, next) =>
        rewriteQuote(c, req, await next(req), (data, p) => {
          data["annual_yield"] = toCents(data["annual_yield"]!, p.assetDecimals);
          data["monthly_yield"] = toCents(data["monthly_yield"]!, p.assetDecimals);
        }),
      ),
  },
  {
    id: "monthly-is-annual-over-12",
    description: "monthly_yield = annual_yield / 12 (simple) instead of the compound monthly rate",
    allowedBy: GAPS.formula,
    failsAtReference: ["YLD-03"],
    wrap: (api, c) =>
      intercept(api, async (req, next) =>
        rewriteQuote(c, req, await next(req), (data, p) => {
          data["monthly_yield"] = formatUnits(
            unwrap(parseDecimal(data["annual_yield"]!, p.assetDecimals)) / 12n,
            p.assetDecimals,
          );
        }),
      ),
  },
  {
    id: "amount-bounds",
    description: "amounts under 0.01 or over 1,000,000 whole units are refused (400 amount_out_of_range)",
    allowedBy: GAPS.bounds,
    failsAtReference: ["YLD-03"],
    wrap: (api) =>
      intercept(api, (req, next) => {
        const amount = query(req).get("amount");
        const value = route(req).leaf === "yield-calc" && amount !== null ? amountValue(amount) : undefined;
        if (value !== undefined) {
          const scale = 10n ** BigInt(value.scale);
          if (value.units * 100n < scale || value.units > 1_000_000n * scale)
            return Promise.resolve(
              problem(400, "amount_out_of_range", "amount must be from 0.01 to 1000000"),
            );
        }
        return next(req);
      }),
  },
  {
    id: "event-data-required",
    description:
      "a correctly signed kyc_updated event needs data.kyc_status, a reconciliation.confirmed one data.reconciliation_id (else 400)",
    allowedBy: GAPS.eventData,
    failsAtReference: ["EVT-20"],
    wrap: (api, c) =>
      intercept(api, async (req, next) => {
        if (req.path !== EVENTS || req.method !== "POST" || !smallBody(req)) return next(req);
        const [read, bytes] = await withBytes(req);
        let event: { event_type?: unknown; data?: Record<string, unknown> } | undefined;
        try {
          event = JSON.parse(decoder.decode(bytes));
        } catch {
          return next(read);
        }
        const signed = (req.headers["x-partner-signature"] ?? "").toLowerCase().replace(/^sha256=/, "");
        const field = typeof event?.event_type === "string" ? REQUIRED_DATA[event.event_type] : undefined;
        if (
          field !== undefined &&
          signed === signBody(c.signingSecret, bytes) &&
          typeof event?.data?.[field] !== "string"
        )
          return problem(400, "invalid_event", `data.${field} is required for ${String(event?.event_type)}`);
        return next(read);
      }),
  },
  {
    id: "lenient-amounts",
    description: 'amounts like "1,000", " 5" and "+1" are read as 1000, 5 and 1',
    allowedBy: spec(
      "§4.4",
      "Query parameter: `amount` (string, required): the amount to invest, in units of the product's asset.",
    ),
    failsAtReference: ["YLD-05"],
    wrap: (api) =>
      intercept(api, (req, next) => {
        const params = query(req);
        const amount = params.get("amount");
        if (route(req).leaf !== "yield-calc" || amount === null) return next(req);
        const lenient = amount.trim().replaceAll(",", "").replace(/^\+/, "");
        if (lenient === amount || !/^[0-9]+(\.[0-9]+)?$/.test(lenient)) return next(req);
        params.set("amount", lenient);
        return next(withQuery(req, params));
      }),
  },
  {
    id: "address-echoed-lowercase",
    description: "the position echoes the address in lower case, not EIP-55",
    allowedBy: spec("§2", "| wallet_address | string | The wallet queried. |"),
    failsAtReference: ["POS-02", "POS-05"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        if (route(req).leaf !== "position" || res.status !== 200) return res;
        return rewriteJson(res, (body) => ({
          ...body,
          data: { ...body.data, wallet_address: body.data.wallet_address.toLowerCase() },
        }));
      }),
  },
  {
    id: "event-header-not-compared",
    description: "X-Partner-Event must be present, but need not equal event_type",
    allowedBy: spec("§4.5", "| X-Partner-Event | event type string (same set of values as `event_type`) |"),
    failsAtReference: ["EVT-16"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        if (req.path !== EVENTS || req.headers["x-partner-event"] === undefined || !smallBody(req))
          return next(req);
        const [read, bytes] = await withBytes(req);
        try {
          const type = (JSON.parse(decoder.decode(bytes)) as { event_type?: unknown }).event_type;
          if (typeof type === "string") return next(withHeader(read, "x-partner-event", type));
        } catch {
          // not JSON: the core refuses it
        }
        return next(read);
      }),
  },
  {
    id: "non-canonical-decimals",
    description: 'rates in the product list are written with a trailing zero ("0.05230")',
    allowedBy: spec("§2", "| underlying_apy | string (decimal number) | APY of the underlying vault. |"),
    failsAtReference: ["PRD-04"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        if (res.status !== 200 || req.path !== PRODUCTS) return res;
        return rewriteJson(res, (body) => {
          for (const p of body.data)
            if (p.latest_metrics?.underlying_apy.includes(".")) p.latest_metrics.underlying_apy += "0";
          return body;
        });
      }),
  },
];

/**
 * All the alternatives at once: one deployment that resolves every gap its own way. The list's
 * order is the nesting (first innermost), so statuses are remapped before the envelope is.
 */
export function combinedAlternatives(api: PartnerApi, context: FaultContext): PartnerApiHandler {
  let handle = api.handle.bind(api);
  for (const alternative of ALTERNATIVES) handle = alternative.wrap({ ...api, handle }, context).handle;
  return { handle };
}
