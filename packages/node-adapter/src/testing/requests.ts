/**
 * A quiet server on 127.0.0.1:0 and correctly signed events for it, with the demo credentials of
 * the sandbox fixtures.
 */
import { signBody } from "@partner-yield/core";
import { DEMO_CREDENTIALS } from "@partner-yield/core/demo";
import { type RunningServer, type StartServerOptions, startServer } from "../server.js";

/** The demo credentials (`DEMO_CREDENTIALS` of @partner-yield/core/demo), under a short name. */
export const DEMO = DEMO_CREDENTIALS;
/** The demo partner's sandbox API key. */
export const KEY = DEMO.sandboxApiKey;
/** The inbound-event route under the default base path. */
export const INBOUND = "/api/partner/webhooks/inbound";

/** A server on an ephemeral port, quiet, with a quota high enough for bursts. */
export function startTestServer(options: StartServerOptions = {}): Promise<RunningServer> {
  return startServer({ port: 0, log: "none", rateLimitQuota: 1_000_000, ...options });
}

/** A valid `partner.user.created` event body, for a new user unless `userId` is given. */
export function eventBody(userId: string = crypto.randomUUID()): string {
  return JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: userId },
  });
}

/** The five headers of a correctly signed event (CONTRACT §5). */
export function eventHeaders(body: string | Uint8Array, idempotencyKey: string): Record<string, string> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return {
    "content-type": "application/json",
    "x-api-key": KEY,
    "x-partner-event": "partner.user.created",
    "x-partner-signature": signBody(DEMO.signingSecret, bytes),
    "idempotency-key": idempotencyKey,
  };
}
