/** Test support: the repo's sandbox fixtures and demo credentials, loaded once. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEMO_CREDENTIALS, withDemoProductionKey } from "../src/demo/index.js";
import {
  FIXTURE_FILES,
  type FixtureFileName,
  loadFixtures,
  type PlainRequest,
  type SandboxData,
  signBody,
} from "../src/index.js";

export const FIXTURES_DIR = fileURLToPath(new URL("../../../fixtures/", import.meta.url));
export const DEMO = DEMO_CREDENTIALS;

/** The fixture files, with the demo production key's record the sandbox adds (`withDemoProductionKey`). */
export function readFixtureFiles(): Record<FixtureFileName, unknown> {
  return withDemoProductionKey(
    Object.fromEntries(
      FIXTURE_FILES.map((file) => [file, JSON.parse(readFileSync(FIXTURES_DIR + file, "utf8"))]),
    ) as Record<FixtureFileName, unknown>,
  );
}

/** Fresh in-memory stores filled from the fixtures. */
export function loadSandbox(): SandboxData {
  return loadFixtures(readFixtureFiles(), { dir: "fixtures" });
}

/**
 * A signed `POST /webhooks/inbound` of `body` with the demo key and secret, idempotency key `key`,
 * type `partner.user.created`; `overrides` replace any field.
 */
export function signedEventRequest(
  body: string,
  key: string,
  overrides: Partial<PlainRequest> = {},
): PlainRequest {
  const bytes = new TextEncoder().encode(body);
  return {
    method: "POST",
    path: "/api/partner/webhooks/inbound",
    headers: {
      "x-api-key": DEMO.sandboxApiKey,
      "content-type": "application/json",
      "x-partner-event": "partner.user.created",
      "idempotency-key": key,
      "x-partner-signature": signBody(DEMO.signingSecret, bytes),
    },
    body: bytes,
    clientAddress: "192.0.2.10",
    ...overrides,
  };
}
