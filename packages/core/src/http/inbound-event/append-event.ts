/**
 * The idempotency step of CONTRACT §5, the last one and the only one that stores anything: the
 * store claims (partner, environment, key) and keeps the event in one atomic step.
 * @module
 */

import type { Environment } from "../../auth/environment.js";
import { toHex } from "../../encoding/hex.js";
import type { EventCredentials, EventStore } from "../../stores/event-store.js";
import type { Partner } from "../../stores/partner-store.js";
import { unknownKeyError } from "../authenticate.js";
import { ApiError } from "../errors.js";
import { okReply, type Reply } from "../reply.js";
import type { ValidEvent } from "./event-schema.js";
import type { JsonBody } from "./json-body.js";
import { signatureMismatch } from "./signature.js";

export interface AppendContext {
  readonly events: EventStore;
  readonly environment: Environment;
  readonly sha256: (data: Uint8Array) => Uint8Array;
  readonly now: () => number;
}

const encoder = new TextEncoder();
/** Where the canonical text is encoded for its hash: one array reused, not a new one per request. */
let scratch = new Uint8Array(4096);

/** `text` as UTF-8, in `scratch`: valid until the next call. */
function utf8(text: string): Uint8Array {
  // Never more than 3 bytes a UTF-16 unit, so encodeInto always writes the whole text.
  if (3 * text.length > scratch.length) scratch = new Uint8Array(3 * text.length);
  return scratch.subarray(0, encoder.encodeInto(text, scratch).written);
}

/**
 * `Retry-After` of `503 event_store_full`: a full in-memory store frees no room by itself (an
 * operator restarts it or moves to PostgreSQL), so a client should not retry at once.
 */
export const EVENT_STORE_FULL_RETRY_SECONDS = 60;

/**
 * Stores a new event (200, duplicate false) or answers for the key's earlier one: the same event
 * is a duplicate (200, `Idempotent-Replayed: true`); another event is `422 idempotency_key_reused`;
 * a key still being stored is `409 idempotency_in_progress` with `Retry-After: 1`; a new event a
 * bounded store has no room for is `503 event_store_full` with `Retry-After`.
 */
export async function appendEvent(
  context: AppendContext,
  partner: Partner,
  idempotencyKey: string,
  event: ValidEvent,
  body: JsonBody,
  authorizedBy?: EventCredentials,
): Promise<Reply> {
  const appended = await context.events.append({
    partnerId: partner.id,
    environment: context.environment,
    idempotencyKey,
    fingerprint: toHex(context.sha256(utf8(event.canonical))),
    eventType: event.eventType,
    occurredAt: event.occurredAt,
    data: event.data,
    rawBody: body.text,
    receivedAt: context.now(),
    // `data` is `JSON.parse(body.text).data` (json-body.ts, event-schema.ts).
    dataFromRawBody: true,
    authorizedBy,
  });
  switch (appended.status) {
    case "created":
      return okReply(`{"success":true,"event_id":${appended.event.id},"duplicate":false}`);
    case "duplicate":
      return okReply(`{"success":true,"event_id":${appended.event.id},"duplicate":true}`, {
        "idempotent-replayed": "true",
      });
    case "conflict":
      throw new ApiError(
        "idempotency_key_reused",
        "this Idempotency-Key was already used for a different event; use a new key for a new event",
      );
    case "full":
      throw new ApiError(
        "event_store_full",
        `this server's in-memory event store is full (${appended.reason}) and accepts no new event; ` +
          "it keeps events for the life of the process only, PostgreSQL is the event store for real use; retry later",
        { headers: { "retry-after": String(EVENT_STORE_FULL_RETRY_SECONDS) } },
      );
    case "revoked":
      // Revoked between the read after the body and the claim: the same answers as before it.
      throw appended.credential === "api_key" ? unknownKeyError() : signatureMismatch();
    case "in_progress":
      throw new ApiError(
        "idempotency_in_progress",
        "an event with this Idempotency-Key is still being stored",
        {
          headers: { "retry-after": "1" },
        },
      );
  }
}
