/**
 * An event as the API appends it, for the benches that fill an in-memory event store
 * (`events-server.ts`, `bench/event-store-gc.ts`): its own raw body, its type, time and `data`
 * parsed from that body, `dataFromRawBody` set; partners alternate between northwind and contoso.
 * `padding` adds a `pad` member of that many characters to `data` (none when 0).
 * @module
 */
import type { NewEvent } from "../../../packages/core/src/index.js";

export function apiEvent(i: number, idempotencyKey: string, padding = 0): NewEvent {
  const pad = padding > 0 ? `,"pad":"${"x".repeat(padding)}"` : "";
  const rawBody = `{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"user_id":"u_${i}"${pad}}}`;
  const parsed = JSON.parse(rawBody) as {
    event_type: string;
    occurred_at: string;
    data: Record<string, unknown>;
  };
  return {
    partnerId: i % 2 === 0 ? "northwind" : "contoso",
    environment: "sandbox",
    idempotencyKey,
    fingerprint: i.toString(16).padStart(64, "0"),
    eventType: parsed.event_type,
    occurredAt: parsed.occurred_at,
    data: parsed.data,
    rawBody,
    receivedAt: Date.now(),
    dataFromRawBody: true,
  };
}
