/**
 * Every resource, request and error as a zod schema, defined once: they validate input, type the
 * code and generate the OpenAPI document (CONTRACT §1, §5, §6, §8).
 */
import { z } from "zod";
import { CANONICAL_DECIMAL } from "../math/decimal.js";
import { PRODUCT_STATUSES } from "../stores/product-source.js";
import { isRfc3339DateTime } from "./date-time.js";
import { ERROR_CODES } from "./errors.js";

/** A product slug (CONTRACT §3): anything else cannot name a product. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** An `Idempotency-Key`: 1–255 visible ASCII characters (CONTRACT §5). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** A canonical decimal string (CONTRACT §1): no exponent, sign only for negatives, no padding zeros. */
export const CanonicalDecimal = z
  .string()
  .regex(CANONICAL_DECIMAL, 'must be a canonical decimal string such as "1000.5" or "0.0523"')
  .meta({ description: "Canonical decimal string (CONTRACT §1)", examples: ["1000.5", "0.0523", "0"] });

/** A canonical decimal that is never negative (amounts, USD values). */
export const NonNegativeDecimal = CanonicalDecimal.refine((s) => !s.startsWith("-"), "must not be negative");

export const EvmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be 0x followed by 40 hexadecimal digits")
  .meta({
    description: "0x-prefixed EVM address in EIP-55 checksum form",
    examples: ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"],
  });

export const ProductStatus = z.enum(PRODUCT_STATUSES).meta({
  description:
    "active; paused (readable, no new deposits); deprecated (withdraw only, terminal). CONTRACT §8",
});
export type ProductStatus = z.infer<typeof ProductStatus>;

/** A UTC calendar date, YYYY-MM-DD. */
export const IsoDate = z.iso.date().meta({ description: "UTC date, YYYY-MM-DD", examples: ["2026-11-20"] });

export const LatestMetrics = z
  .strictObject({
    as_of_date: IsoDate,
    wrapper_total_assets: NonNegativeDecimal,
    underlying_apy: CanonicalDecimal.meta({ description: "Fraction: 0.0523 means 5.23 %" }),
    net_apy_for_user: CanonicalDecimal.meta({
      description:
        "underlying_apy × (10000 − service_fee_bps − partner_fee_bps) / 10000 when positive, else underlying_apy",
    }),
  })
  .meta({ id: "LatestMetrics" });
export type LatestMetrics = z.infer<typeof LatestMetrics>;

export const Product = z
  .strictObject({
    slug: z.string().meta({ examples: ["usdc-base-prime"] }),
    partner: z.string(),
    chain: z.string().meta({ examples: ["base"] }),
    chain_id: z
      .int()
      .positive()
      .meta({ examples: [8453] }),
    wrapper_address: EvmAddress,
    asset_symbol: z.string(),
    status: ProductStatus,
    underlying_vault_address: EvmAddress,
    asset_address: EvmAddress,
    asset_decimals: z.int().min(0).max(36),
    service_fee_bps: z.int().min(0).max(10000),
    partner_fee_bps: z.int().min(0).max(10000),
    display_name: z.string(),
    description: z.string(),
    latest_metrics: LatestMetrics.nullable().meta({ description: "null until the product has metrics" }),
  })
  .meta({ id: "Product" });
export type Product = z.infer<typeof Product>;

/** Base units: a non-negative integer without sign, point or leading zero. */
const BaseUnits = z.string().regex(/^(0|[1-9][0-9]*)$/);

export const PositionVault = z
  .strictObject({
    decimals_offset: z.int().min(0).max(36).meta({ description: "δ: shares have asset_decimals + δ digits" }),
    total_assets: BaseUnits.meta({ description: "The vault's totalAssets, an integer in asset base units" }),
    total_supply: BaseUnits.meta({ description: "The vault's totalSupply, an integer in share base units" }),
    usd_price: NonNegativeDecimal.optional().meta({
      description: "USD per whole unit of the asset, as priced for usd_value (present when assets > 0)",
    }),
  })
  .meta({ id: "PositionVault" });

export const Position = z
  .strictObject({
    wallet_address: EvmAddress,
    product_slug: z.string(),
    shares: NonNegativeDecimal.meta({ description: "Vault shares, at asset_decimals + decimals offset" }),
    assets: NonNegativeDecimal.meta({ description: "convertToAssets(shares), at asset_decimals" }),
    usd_value: NonNegativeDecimal.meta({
      description: "floor(assets × price) in USD, at most 2 fractional digits",
    }),
    vault: PositionVault.optional().meta({
      description:
        "The audit view: what assets and usd_value were computed from (absent when the deployment reads convertToAssets from the vault itself, or the wrapper has no vault entry)",
    }),
  })
  .meta({ id: "Position" });
export type Position = z.infer<typeof Position>;

export const YieldCalculation = z
  .strictObject({
    principal: NonNegativeDecimal.meta({ description: "The amount supplied, in canonical form" }),
    annual_yield: CanonicalDecimal.meta({
      description: "floor(principal × net_apy_for_user), in asset units",
    }),
    monthly_yield: CanonicalDecimal.meta({
      description: "floor(principal × ((1 + net_apy)^(1/12) − 1)), in asset units",
    }),
    net_apy_for_user: CanonicalDecimal,
  })
  .meta({ id: "YieldCalculation" });
export type YieldCalculation = z.infer<typeof YieldCalculation>;

export const ProductListResponse = z
  .strictObject({ success: z.literal(true), data: z.array(Product) })
  .meta({ id: "ProductListResponse" });
export const ProductResponse = z
  .strictObject({ success: z.literal(true), data: Product })
  .meta({ id: "ProductResponse" });
export const PositionResponse = z
  .strictObject({ success: z.literal(true), data: Position })
  .meta({ id: "PositionResponse" });
export const YieldCalculationResponse = z
  .strictObject({ success: z.literal(true), data: YieldCalculation })
  .meta({ id: "YieldCalculationResponse" });

export const EVENT_TYPES = [
  "partner.user.created",
  "partner.user.kyc_updated",
  "partner.reconciliation.confirmed",
] as const;
export const EventType = z.enum(EVENT_TYPES).meta({ id: "EventType" });
export type EventType = z.infer<typeof EventType>;

/** RFC 3339 date-time with an explicit offset (`Z` or `±hh:mm`), at most 9 fractional digits, CONTRACT §5. */
export const Rfc3339DateTime = z
  .string()
  .refine(isRfc3339DateTime, "must be an RFC 3339 date-time with an offset, e.g. 2026-11-20T10:15:00Z")
  .meta({
    format: "date-time",
    description: "RFC 3339 date-time with offset; fractional seconds of at most 9 digits",
    examples: ["2026-11-20T10:15:00Z"],
  });

export const PartnerEvent = z
  .strictObject({
    event_type: EventType,
    occurred_at: Rfc3339DateTime,
    data: z
      .record(z.string(), z.unknown())
      .meta({ description: "Event payload: a JSON object, opaque to the service" }),
  })
  .meta({ id: "PartnerEvent" });
export type PartnerEvent = z.infer<typeof PartnerEvent>;

export const EventAck = z
  .strictObject({
    success: z.literal(true),
    event_id: z.int().positive(),
    duplicate: z.boolean(),
  })
  .meta({ id: "EventAck" });
export type EventAck = z.infer<typeof EventAck>;

export const FieldErrorSchema = z
  .strictObject({ pointer: z.string(), detail: z.string() })
  .meta({ id: "FieldError" });

export const Problem = z
  .strictObject({
    success: z.literal(false),
    type: z.url(),
    title: z.string(),
    status: z.int().min(400).max(599),
    code: z.enum(ERROR_CODES as [string, ...string[]]),
    detail: z.string(),
    request_id: z.string(),
    errors: z.array(FieldErrorSchema).optional(),
  })
  .meta({
    id: "Problem",
    description: "RFC 9457 problem details with the envelope's success flag (CONTRACT §6)",
  });
export type Problem = z.infer<typeof Problem>;
