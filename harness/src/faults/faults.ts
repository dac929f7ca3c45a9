/**
 * Faults for proving that the checks can fail: each wraps the real API's `handle()` and breaks one
 * rule the way a real implementation might (skip a check, round the wrong way, rewrite a response).
 * The harness's own tests start the node-adapter server with each fault and assert that the
 * checks in `caughtBy` fail, and that the clean server passes every check. Behaviour interface.md
 * allows but our contract does not choose is not a fault: see `alternatives.ts`.
 * @module
 */
import { type PartnerApi, type PartnerApiHandler, signBody } from "@partner-yield/core";
import {
  formatUnits,
  monthlyGrowthFactor,
  parseDecimal,
  quoteYield,
  RATE_DECIMALS,
  ROOT_SCALE,
  unwrap,
  usdValueCents,
  WAD,
} from "@partner-yield/core/math";

import {
  codeOf,
  decoder,
  dropHeaders,
  EVENTS,
  encoder,
  type FaultContext,
  intercept,
  PRODUCTS,
  problem,
  query,
  rewriteJson,
  rewriteQuote,
  route,
  withBytes,
  withHeader,
  withQuery,
} from "./interceptors.js";

export interface Fault {
  /** kebab-case, stable. */
  readonly id: string;
  readonly description: string;
  /** The checks that must fail against it (each of them). */
  readonly caughtBy: readonly string[];
  /** The checks that must end with a warning against it (a finding that is not a failure). */
  readonly warnedBy?: readonly string[];
  /** Also caught at level `spec` (the caughtBy checks of level spec fail there too). */
  readonly atSpec?: boolean;
  /** Per-minute quota of the faulty server (the probe fault wants a small one). */
  readonly quota?: number;
  readonly rateLimitProbe?: boolean;
  wrap(api: PartnerApi, context: FaultContext): PartnerApiHandler;
}

let counter = 0;

export const FAULTS: readonly Fault[] = [
  {
    id: "auth-not-required",
    description: "a request without X-Api-Key is served as the demo partner",
    caughtBy: ["AUTH-01", "AUTH-05"],
    atSpec: true,
    wrap: (api, c) =>
      intercept(api, (req, next) =>
        next(req.headers["x-api-key"] === undefined ? withHeader(req, "x-api-key", c.apiKey) : req),
      ),
  },
  {
    id: "wrong-environment-accepted",
    description: "a production key is accepted by the sandbox",
    caughtBy: ["AUTH-03"],
    wrap: (api, c) =>
      intercept(api, (req, next) =>
        next(req.headers["x-api-key"] === c.productionApiKey ? withHeader(req, "x-api-key", c.apiKey) : req),
      ),
  },
  {
    id: "foreign-product-visible",
    description: "another partner's product is served to whoever asks for its slug",
    caughtBy: ["PRD-07"],
    atSpec: true,
    wrap: (api, c) =>
      intercept(api, (req, next) =>
        next(route(req).slug === c.foreignSlug ? withHeader(req, "x-api-key", c.otherPartnerApiKey) : req),
      ),
  },
  {
    id: "net-apy-without-fees",
    description: "products show the underlying APY as net_apy_for_user (fees forgotten)",
    caughtBy: ["PRD-05"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        if (res.status !== 200 || !req.path.startsWith(PRODUCTS) || route(req).leaf !== undefined) return res;
        return rewriteJson(res, (body) => {
          for (const p of Array.isArray(body.data) ? body.data : [body.data]) {
            if (p.latest_metrics) p.latest_metrics.net_apy_for_user = p.latest_metrics.underlying_apy;
          }
          return body;
        });
      }),
  },
  {
    id: "yield-rounded-up",
    description: "annual_yield is P × n rounded up instead of down",
    caughtBy: ["YLD-03"],
    wrap: (api, c) =>
      intercept(api, async (req, next) =>
        rewriteQuote(c, req, await next(req), (data, p) => {
          const units = unwrap(parseDecimal(data["principal"]!, p.assetDecimals));
          const exact = units * unwrap(parseDecimal(data["net_apy_for_user"]!, RATE_DECIMALS));
          const ceil = exact % WAD === 0n ? exact / WAD : exact / WAD + 1n;
          data["annual_yield"] = formatUnits(ceil, p.assetDecimals);
        }),
      ),
  },
  {
    id: "excess-decimals-accepted",
    description: "an amount with more fractional digits than the asset has is truncated and quoted",
    caughtBy: ["YLD-06"],
    wrap: (api, c) =>
      intercept(api, (req, next) => {
        const { slug, leaf } = route(req);
        const product = slug === undefined ? undefined : c.products.get(slug);
        const params = query(req);
        const amount = params.get("amount");
        if (
          leaf !== "yield-calc" ||
          product === undefined ||
          amount === null ||
          !/^[0-9]+\.[0-9]+$/.test(amount)
        )
          return next(req);
        const [whole, fraction] = amount.split(".") as [string, string];
        const kept = fraction.slice(0, product.assetDecimals);
        params.set("amount", kept === "" ? whole : `${whole}.${kept}`);
        return next(withQuery(req, params));
      }),
  },
  {
    id: "bad-checksum-accepted",
    description: "a mixed-case address is accepted whatever its EIP-55 checksum",
    caughtBy: ["POS-03"],
    wrap: (api) =>
      intercept(api, (req, next) => {
        const params = query(req);
        const address = params.get("address");
        if (route(req).leaf !== "position" || address === null || !/^0x[0-9a-fA-F]{40}$/.test(address))
          return next(req);
        params.set("address", address.toLowerCase());
        return next(withQuery(req, params));
      }),
  },
  {
    id: "signature-not-checked",
    description: "X-Partner-Signature is never verified",
    caughtBy: ["EVT-05", "EVT-06", "EVT-07", "EVT-08"],
    atSpec: true,
    wrap: (api, c) =>
      intercept(api, async (req, next) => {
        if (req.path !== EVENTS || req.method !== "POST") return next(req);
        const [read, bytes] = await withBytes(req);
        return next(withHeader(read, "x-partner-signature", signBody(c.signingSecret, bytes)));
      }),
  },
  {
    id: "signature-over-reserialised-json",
    description: "the signature is checked over JSON.stringify(JSON.parse(body)), not the raw bytes",
    caughtBy: ["EVT-10"],
    atSpec: true,
    wrap: (api, c) =>
      intercept(api, async (req, next) => {
        if (req.path !== EVENTS || req.method !== "POST") return next(req);
        const [read, bytes] = await withBytes(req);
        let normalised: Uint8Array;
        try {
          normalised = encoder.encode(JSON.stringify(JSON.parse(decoder.decode(bytes))));
        } catch {
          return next(read);
        }
        const sent = (req.headers["x-partner-signature"] ?? "").toLowerCase().replace(/^sha256=/, "");
        const verdict =
          sent === signBody(c.signingSecret, normalised) ? signBody(c.signingSecret, bytes) : "0".repeat(64);
        return next(withHeader(read, "x-partner-signature", verdict));
      }),
  },
  {
    id: "uppercase-signature-refused",
    description: "a signature in upper-case hex is refused",
    caughtBy: ["EVT-09"],
    wrap: (api) =>
      intercept(api, (req, next) => {
        const signature = req.headers["x-partner-signature"];
        return next(
          signature !== undefined && /[A-F]/.test(signature)
            ? withHeader(req, "x-partner-signature", "0".repeat(64))
            : req,
        );
      }),
  },
  {
    id: "duplicate-creates-new-event",
    description: "a repeated request with the same Idempotency-Key creates another event",
    caughtBy: ["EVT-02"],
    atSpec: true,
    wrap: (api) =>
      intercept(api, (req, next) => {
        const key = req.headers["idempotency-key"];
        return next(
          req.path === EVENTS && key !== undefined
            ? withHeader(req, "idempotency-key", `${key}~${counter++}`)
            : req,
        );
      }),
  },
  {
    id: "reused-key-accepted",
    description: "a reused Idempotency-Key with a different body is stored as a new event",
    caughtBy: ["EVT-04"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        if (req.path !== EVENTS) return next(req);
        const [read] = await withBytes(req);
        const res = await next(read);
        if (res.status !== 422) return res;
        return next(withHeader(read, "idempotency-key", `${req.headers["idempotency-key"]}~${counter++}`));
      }),
  },
  {
    id: "missing-idempotency-key-accepted",
    description: "an event without Idempotency-Key is accepted under a generated key",
    caughtBy: ["EVT-11"],
    atSpec: true,
    wrap: (api) =>
      intercept(api, (req, next) =>
        next(
          req.path === EVENTS && req.headers["idempotency-key"] === undefined
            ? withHeader(req, "idempotency-key", `generated-${counter++}`)
            : req,
        ),
      ),
  },
  {
    id: "content-type-ignored",
    description: "any Content-Type is accepted on events",
    caughtBy: ["EVT-13"],
    atSpec: true,
    wrap: (api) =>
      intercept(api, (req, next) =>
        next(req.path === EVENTS ? withHeader(req, "content-type", "application/json") : req),
      ),
  },
  {
    id: "refused-request-leaves-record",
    description: "an event refused by the schema still claims its Idempotency-Key",
    caughtBy: ["EVT-18"],
    wrap: (api, c) =>
      intercept(api, async (req, next) => {
        if (req.path !== EVENTS) return next(req);
        const [read] = await withBytes(req);
        const res = await next(read);
        if (res.status === 400 && codeOf(res) === "invalid_event") {
          const placeholder = encoder.encode(
            JSON.stringify({
              event_type: "partner.user.created",
              occurred_at: "2026-01-01T00:00:00Z",
              data: {},
            }),
          );
          await next({
            ...read,
            body: placeholder,
            headers: {
              ...read.headers,
              "x-partner-event": "partner.user.created",
              "x-partner-signature": signBody(c.signingSecret, placeholder),
            },
          });
        }
        return res;
      }),
  },
  {
    id: "concurrent-duplicates-race",
    description: "identical events arriving together each create an event (claim and store not atomic)",
    caughtBy: ["EVT-19"],
    wrap: (api) => {
      const inFlight = new Set<string>();
      return intercept(api, async (req, next) => {
        const key = req.headers["idempotency-key"];
        if (req.path !== EVENTS || key === undefined) return next(req);
        const racing = inFlight.has(key);
        inFlight.add(key);
        try {
          // A slow store: the window in which a check-then-insert races.
          await new Promise((resolve) => setTimeout(resolve, 25));
          return await next(racing ? withHeader(req, "idempotency-key", `${key}~race${counter++}`) : req);
        } finally {
          if (!racing) inFlight.delete(key);
        }
      });
    },
  },
  {
    id: "event-ids-decrease",
    description: "event_id does not increase in acceptance order",
    caughtBy: ["EVT-20"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        if (req.path !== EVENTS || res.status !== 200) return res;
        return rewriteJson(res, (body) => ({ ...body, event_id: 1_000_000 - body.event_id }));
      }),
  },
  {
    id: "server-error-on-malformed-amount",
    description: "a malformed amount crashes the handler (500)",
    caughtBy: ["YLD-05", "ERR-05"],
    atSpec: true,
    wrap: (api) =>
      intercept(api, (req, next) => {
        const amount = query(req).get("amount");
        if (route(req).leaf === "yield-calc" && amount !== null && !/^[0-9]+(\.[0-9]+)?$/.test(amount)) {
          return Promise.resolve(problem(500, "internal_error", "Cannot convert NaN to a BigInt"));
        }
        return next(req);
      }),
  },
  {
    id: "unknown-slug-wrong-status",
    description: "an unknown slug is answered 400 invalid_parameter instead of 404",
    caughtBy: ["PRD-06"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        return codeOf(res) === "product_not_found" ? problem(400, "invalid_parameter", "unknown slug") : res;
      }),
  },
  {
    id: "inactive-product-quoted",
    description: "a paused or deprecated product gets a yield quote",
    caughtBy: ["YLD-08"],
    wrap: (api, c) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        const product = c.products.get(route(req).slug ?? "");
        const amount = query(req).get("amount");
        if (
          codeOf(res) !== "product_not_active" ||
          product === undefined ||
          product.metrics === null ||
          amount === null
        )
          return res;
        const data = quoteYield({
          amountUnits: unwrap(parseDecimal(amount, product.assetDecimals)),
          assetDecimals: product.assetDecimals,
          underlyingApyWad: product.metrics.underlyingApyWad,
          serviceFeeBps: product.serviceFeeBps,
          partnerFeeBps: product.partnerFeeBps,
        });
        return {
          status: 200,
          headers: { ...res.headers, "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify({ success: true, data }),
        };
      }),
  },
  {
    id: "state-checked-before-amount",
    description: "a malformed amount on a paused product is answered 409 instead of 400",
    caughtBy: ["YLD-12"],
    wrap: (api, c) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        const product = c.products.get(route(req).slug ?? "");
        if (product === undefined || product.status === "active" || codeOf(res) !== "invalid_amount")
          return res;
        return problem(409, "product_not_active", `product is ${product.status}`);
      }),
  },
  {
    id: "secret-echoed",
    description: "a refused API key is quoted back in the problem detail",
    caughtBy: ["ERR-02"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        const key = req.headers["x-api-key"];
        if (res.status !== 401 || key === undefined) return res;
        return rewriteJson(res, (body) => ({ ...body, detail: `${body.detail} (got ${key})` }));
      }),
  },
  {
    id: "allow-header-missing",
    description: "405 responses carry no Allow header",
    caughtBy: ["ERR-03"],
    wrap: (api) => intercept(api, async (req, next) => dropHeaders(await next(req), "allow")),
  },
  {
    id: "unknown-route-needs-auth",
    description: "an unknown route without a key is answered 401, not 404",
    caughtBy: ["ERR-04"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        return codeOf(res) === "not_found" && req.headers["x-api-key"] === undefined
          ? problem(401, "missing_api_key", "the X-Api-Key header is required")
          : res;
      }),
  },
  {
    id: "cors-enabled",
    description: "responses allow any browser origin (Access-Control-Allow-Origin: *)",
    caughtBy: ["ERR-06"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        return { ...res, headers: { ...res.headers, "access-control-allow-origin": "*" } };
      }),
  },
  {
    id: "rate-limit-remaining-frozen",
    description: "RateLimit always reports the full quota left (r never counts down)",
    caughtBy: ["RL-02"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        const value = res.headers["ratelimit"];
        if (value === undefined) return res;
        return { ...res, headers: { ...res.headers, ratelimit: value.replace(/r=[0-9]+/, "r=999") } };
      }),
  },
  {
    id: "429-without-retry-after",
    description: "a request over the quota gets 429 without Retry-After",
    caughtBy: ["RL-03"],
    quota: 30,
    rateLimitProbe: true,
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        return res.status === 429 ? dropHeaders(res, "retry-after") : res;
      }),
  },
  {
    id: "position-assets-equal-shares",
    description: "a position's assets are its shares (convertToAssets forgotten)",
    caughtBy: ["POS-09"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        if (route(req).leaf !== "position" || res.status !== 200) return res;
        return rewriteJson(res, (body) => ({ ...body, data: { ...body.data, assets: body.data.shares } }));
      }),
  },
  {
    id: "no-virtual-shares",
    description:
      "positions convert shares without OpenZeppelin's virtual shares: floor(shares × total_assets / total_supply), no +1, no +10^δ",
    caughtBy: ["POS-09"],
    wrap: (api, c) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        const { slug, leaf } = route(req);
        const product = slug === undefined ? undefined : c.products.get(slug);
        if (leaf !== "position" || res.status !== 200 || product === undefined) return res;
        return rewriteJson(res, (body) => {
          const data = body.data;
          const vault = data.vault as
            | { total_assets: string; total_supply: string; usd_price?: string }
            | undefined;
          if (vault === undefined) return body;
          const d = product.assetDecimals;
          const shares = unwrap(parseDecimal(data.shares, d + product.decimalsOffset));
          const supply = BigInt(vault.total_supply);
          const assets = supply === 0n ? 0n : (shares * BigInt(vault.total_assets)) / supply;
          data.assets = formatUnits(assets, d);
          if (vault.usd_price !== undefined)
            data.usd_value = formatUnits(
              usdValueCents(assets, d, unwrap(parseDecimal(vault.usd_price, 18))),
              2,
            );
          return body;
        });
      }),
  },
  {
    id: "usd-value-wrong",
    description: 'every position is worth usd_value "99999.99"',
    caughtBy: ["POS-09", "POS-10"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        if (route(req).leaf !== "position" || res.status !== 200) return res;
        return rewriteJson(res, (body) => ({ ...body, data: { ...body.data, usd_value: "99999.99" } }));
      }),
  },
  {
    id: "content-type-checked-before-size",
    description: "an event's Content-Type is checked before its size (415 where 413 comes first)",
    caughtBy: ["EVT-21"],
    wrap: (api) =>
      intercept(api, (req, next) => {
        const type = req.headers["content-type"] ?? "";
        if (req.path === EVENTS && req.method === "POST" && !/^application\/json\b/i.test(type))
          return Promise.resolve(
            problem(415, "unsupported_media_type", "Content-Type must be application/json"),
          );
        return next(req);
      }),
  },
  {
    id: "chunked-body-read-whole",
    description:
      "an event body without Content-Length is read to its end before the size is checked (as behind a buffering proxy)",
    caughtBy: [],
    warnedBy: ["EVT-22"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        if (req.path !== EVENTS || typeof req.body !== "function") return next(req);
        const bytes = await req.body(Number.MAX_SAFE_INTEGER);
        return next({ ...req, body: bytes });
      }),
  },
  {
    id: "hygiene-headers-missing-on-errors",
    description: "error responses lack Cache-Control: no-store and X-Content-Type-Options",
    caughtBy: ["ERR-08"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        const res = await next(req);
        return res.status >= 400 ? dropHeaders(res, "cache-control", "x-content-type-options") : res;
      }),
  },
  {
    id: "revoked-key-accepted",
    description: "a revoked API key still authenticates",
    caughtBy: ["AUTH-06"],
    wrap: (api, c) =>
      intercept(api, (req, next) =>
        next(
          c.revokedApiKey !== "" && req.headers["x-api-key"] === c.revokedApiKey
            ? withHeader(req, "x-api-key", c.apiKey)
            : req,
        ),
      ),
  },
  {
    id: "chunked-body-unlimited",
    description: "an event body without Content-Length is read to its end and never refused for its size",
    caughtBy: ["EVT-22"],
    wrap: (api) =>
      intercept(api, async (req, next) => {
        if (req.path !== EVENTS || typeof req.body !== "function") return next(req);
        const bytes = await req.body(Number.MAX_SAFE_INTEGER);
        // Only the first KiB is ever looked at: whatever the size, no 413.
        return next({ ...req, body: bytes.subarray(0, 1024) });
      }),
  },
  {
    id: "monthly-rounded-up",
    description: "monthly_yield is P × (R − S) / S rounded up instead of down (the core's rounding bug)",
    caughtBy: ["YLD-03"],
    wrap: (api, c) =>
      intercept(api, async (req, next) =>
        rewriteQuote(c, req, await next(req), (data, p) => {
          const units = unwrap(parseDecimal(data["principal"]!, p.assetDecimals));
          const n = unwrap(parseDecimal(data["net_apy_for_user"]!, RATE_DECIMALS));
          const exact = units * (monthlyGrowthFactor(n) - ROOT_SCALE);
          const ceil = exact >= 0n ? (exact + ROOT_SCALE - 1n) / ROOT_SCALE : exact / ROOT_SCALE;
          data["monthly_yield"] = formatUnits(ceil, p.assetDecimals);
        }),
      ),
  },
];

export type { FaultContext } from "./interceptors.js";
