/**
 * `POST /webhooks/inbound` (CONTRACT §5): a signed, idempotent partner event. Authentication and
 * the rate limit have passed; the steps below run in the contract's order and the first failure
 * wins. Nothing is stored before the last step, so a refused request can be fixed and resent with
 * the same Idempotency-Key.
 */
import { type AnyAnswer, awaits } from "../../stores/maybe-promise.js";
import { currentPartner } from "../authenticate.js";
import type { PartnerHandler } from "../handler.js";
import { appendEvent } from "../inbound-event/append-event.js";
import { requireJsonContentType } from "../inbound-event/content-type.js";
import { validateEvent } from "../inbound-event/event-schema.js";
import { requireMatchingEventType } from "../inbound-event/event-type-header.js";
import { requireIdempotencyKey } from "../inbound-event/idempotency-key.js";
import { parseJsonBody } from "../inbound-event/json-body.js";
import { requireValidSignature } from "../inbound-event/signature.js";
import { readBody } from "../read-body.js";

export const receivePartnerEvent: PartnerHandler = async ({ request, keyHash }, deps) => {
  const body = await readBody(request, deps.bodyLimitBytes); // 413
  requireJsonContentType(request); // 415
  // The body may have taken until the request timeout to arrive: the key and the partner's active
  // secrets are read again now, so a key or secret revoked meanwhile refuses it (CONTRACT §4), and
  // the store checks both once more with the claim (`authorizedBy`). An in-memory store answers at
  // once, so nothing runs between this read and the claim.
  const current = currentPartner(keyHash, deps); // 401 invalid_api_key
  const partner = awaits(current, (current as AnyAnswer)?.then) ? await current : current;
  const signedWith = requireValidSignature(request, body, deps.verifierFor(partner)); // 401 invalid_signature
  const idempotencyKey = requireIdempotencyKey(request); // 400 missing_ or invalid_idempotency_key
  const json = parseJsonBody(body); // 400 invalid_json
  const event = validateEvent(json); // 400 invalid_event
  requireMatchingEventType(request, event.eventType); // 400 event_type_mismatch
  return appendEvent(deps, partner, idempotencyKey, event, json, {
    keyHash,
    signingSecret: partner.signingSecrets[signedWith]!,
  }); // 200, 409 or 422
};
