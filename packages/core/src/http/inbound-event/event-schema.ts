/**
 * The schema step of CONTRACT §5: the parsed body is a `PartnerEvent` (unknown top-level fields
 * refused), can be fingerprinted (canonical JSON, bounded depth), and holds only numbers a
 * JavaScript number keeps exactly (docs/contract.md, Events).
 * @module
 */
import { canonicalJsonScan } from "../../encoding/canonical-json.js";
import { findInexactNumber, MAX_EXACT_SIGNIFICANT_DIGITS } from "../../math/exact-numbers.js";
import { ApiError, type FieldError } from "../errors.js";
import { type EventType, PartnerEvent } from "../schemas.js";
import type { JsonBody } from "./json-body.js";

/** An event that passed the schema, with what the store and the fingerprint need. */
export interface ValidEvent {
  readonly eventType: EventType;
  readonly occurredAt: string;
  /** `data` exactly as parsed (zod rebuilds objects and would drop keys such as `__proto__`). */
  readonly data: Record<string, unknown>;
  /** Canonical JSON of the whole parsed body: the input of the fingerprint. */
  readonly canonical: string;
}

/**
 * @throws ApiError `invalid_event` (400) with the failing fields as JSON pointers under `/body`.
 */
export function validateEvent(body: JsonBody): ValidEvent {
  requireSchema(body.value);
  // zod rebuilds objects (and would drop keys such as `__proto__` from `data`): the parsed value is kept.
  const value = body.value as SchemaShape;
  // `body.text` came from a strict UTF-8 decoder (json-body.ts): with no backslash in it, no
  // string it holds needs escaping.
  const canonical = canonicalJsonScan(value, { unescaped: !body.text.includes("\\") });
  if (!canonical.ok) {
    // The schema passed, so only `data` can nest too deep.
    const pointer = canonical.code === "too_deep" ? "/body/data" : "/body";
    throw new ApiError("invalid_event", `the event cannot be fingerprinted: ${canonical.reason}`, {
      errors: [{ pointer, detail: canonical.reason }],
    });
  }
  // The text is scanned only when the parsed body holds a number at all (amounts are strings, §1).
  const inexact = canonical.value.numbers ? findInexactNumber(body.text) : undefined;
  if (inexact !== undefined) {
    const detail = `the number ${inexact.slice(0, 40)} cannot be held exactly (at most ${MAX_EXACT_SIGNIFICANT_DIGITS} significant digits, or a safe integer); send amounts and large integers as strings`;
    throw new ApiError("invalid_event", detail, { errors: [{ pointer: "/body", detail }] });
  }
  return {
    eventType: value.event_type,
    occurredAt: value.occurred_at,
    data: value.data,
    canonical: canonical.value.text,
  };
}

/** A parsed body the schema accepts: the three members and nothing else. */
interface SchemaShape {
  readonly event_type: EventType;
  readonly occurred_at: string;
  readonly data: Record<string, unknown>;
}

/**
 * The schema checked by zod (`PartnerEvent`), which names what fails.
 * @throws ApiError `invalid_event` (400) with zod's issues as JSON pointers under `/body`.
 */
function requireSchema(value: unknown): void {
  const result = PartnerEvent.safeParse(value);
  if (!result.success) {
    const errors = result.error.issues.flatMap((issue): FieldError[] => {
      const base = `/body${issue.path.map((p) => `/${escapePointer(String(p))}`).join("")}`;
      if (issue.code === "unrecognized_keys") {
        return issue.keys.map((k) => ({ pointer: `${base}/${escapePointer(k)}`, detail: "unknown field" }));
      }
      return [{ pointer: base, detail: issue.message }];
    });
    throw new ApiError("invalid_event", "the event does not match the schema", { errors });
  }
}

/** RFC 6901: `~` and `/` inside a segment. */
function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}
