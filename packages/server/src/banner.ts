/**
 * What `partner-yield serve` prints once it listens: where it is, the demo credentials when the
 * fixtures hold them, and three curl commands that work as pasted (one a correctly signed event,
 * signed in the shell with openssl over the exact body bytes).
 * @module
 */
import type { Environment, KeyStore, PartnerStore, ProductRecord } from "@partner-yield/core";
import { hashApiKey } from "@partner-yield/core";
import { DEMO_CREDENTIALS } from "@partner-yield/core/demo";
import { nodeSha256 } from "@partner-yield/node-adapter";

/** Lines that open and close the copy-paste block (tests run what is between them with bash). */
export const SCRIPT_START = "# ---- copy from here ----";
export const SCRIPT_END = "# ---- to here ----";

/** What the banner reads from the data (the fixtures' `SandboxData` is one). */
export interface BannerData {
  readonly keys: KeyStore;
  readonly partners: PartnerStore;
  readonly partnerList: readonly unknown[];
  readonly productRecords: readonly ProductRecord[];
}

export interface BannerInput {
  readonly url: string;
  readonly environment: Environment;
  readonly fixturesDir: string;
  readonly data: BannerData;
  readonly bodyLimitBytes: number;
  readonly rateLimitQuota: number | undefined;
  /** One line per store saying what holds it; default: the fixtures and in-memory stores. */
  readonly stores?: readonly string[] | undefined;
  /** Where positions, metrics and prices come from when not (only) the fixtures. */
  readonly sources?: readonly string[] | undefined;
}

/**
 * The demo credentials, when the loaded data hold the demo sandbox key (active). Never outside the
 * sandbox: a production server prints no credential (and refuses published ones, cli.ts).
 */
export async function demoCredentialsIn(
  data: BannerData,
  environment: Environment,
): Promise<{ apiKey: string; signingSecret: string | undefined } | undefined> {
  if (environment !== "sandbox") return undefined;
  const apiKey = DEMO_CREDENTIALS.sandboxApiKey;
  const record = await data.keys.findByHash(hashApiKey(apiKey, nodeSha256));
  if (record === undefined || record.status !== "active" || record.environment !== environment)
    return undefined;
  const partner = await data.partners.getPartner(record.partnerId);
  const secret = DEMO_CREDENTIALS.signingSecret;
  return { apiKey, signingSecret: partner?.signingSecrets.includes(secret) ? secret : undefined };
}

/**
 * The startup text.
 * @example process.stdout.write(await formatBanner({ url, environment: "sandbox", fixturesDir, data, … }));
 */
export async function formatBanner(input: BannerInput): Promise<string> {
  const { url, environment, data } = input;
  const demo = await demoCredentialsIn(data, environment);
  const lines = [
    `partner-yield: serving ${environment} at ${url}`,
    ...(input.stores === undefined
      ? [
          `  fixtures ${input.fixturesDir} (${data.partnerList.length} partners, ${data.productRecords.length} products), in-memory stores`,
        ]
      : input.stores.map((line) => `  ${line}`)),
    `  body limit ${input.bodyLimitBytes} bytes; rate limit ${
      input.rateLimitQuota === undefined
        ? "per partner"
        : `${input.rateLimitQuota}/min for every partner (override)`
    }`,
    `  OpenAPI ${url}/api/partner/openapi.json · health ${url}/healthz · readiness ${url}/readyz`,
    ...(input.sources ?? []),
    "",
  ];
  if (demo === undefined) {
    lines.push(
      environment === "sandbox"
        ? "These fixtures do not hold the demo key: use one of your own keys below."
        : "No credential is printed in production: use one of your partner's keys below.",
      "",
    );
  } else {
    lines.push(
      "Demo credentials (sandbox only; published in the README, so production refuses them):",
      `  API key         ${demo.apiKey}`,
      ...(demo.signingSecret === undefined ? [] : [`  signing secret  ${demo.signingSecret}`]),
      "",
    );
  }
  const slug = exampleSlug(data, demo === undefined ? undefined : DEMO_CREDENTIALS.partnerId);
  const body = JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: "u_demo_1", country: "DE" },
  });
  lines.push(
    "Try it (paste into bash; run the event twice and the second answer says duplicate: true):",
    SCRIPT_START,
    `BASE_URL=${url}`,
    `API_KEY=${demo?.apiKey ?? "'<your API key>'"}`,
    `SECRET=${demo?.signingSecret ?? "'<your signing secret>'"}`,
    `curl -sS -w '\\n' "$BASE_URL/api/partner/products" -H "X-Api-Key: $API_KEY"`,
    `curl -sS -w '\\n' "$BASE_URL/api/partner/products/${slug}/yield-calc?amount=1000" -H "X-Api-Key: $API_KEY"`,
    `BODY='${body}'`,
    `SIG=$(printf '%s' "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')`,
    `curl -sS -w '\\n' -X POST "$BASE_URL/api/partner/webhooks/inbound" \\`,
    `  -H "Content-Type: application/json" -H "X-Api-Key: $API_KEY" \\`,
    `  -H "X-Partner-Event: partner.user.created" -H "X-Partner-Signature: $SIG" \\`,
    `  -H "Idempotency-Key: demo-event-1" --data-binary "$BODY"`,
    SCRIPT_END,
    "",
    "Stop with Ctrl-C (graceful shutdown).",
    "",
  );
  return lines.join("\n");
}

/** An active product with metrics (so yield-calc answers 200), the demo partner's when known. */
function exampleSlug(data: BannerData, partnerId: string | undefined): string {
  const products = data.productRecords.filter((p) => partnerId === undefined || p.partnerId === partnerId);
  // A positive yield makes the better first example (a database lists products by slug).
  const quotable =
    products.find((p) => p.status === "active" && (p.metrics?.underlyingApyWad ?? 0n) > 0n) ??
    products.find((p) => p.status === "active" && p.metrics !== null) ??
    products[0];
  return quotable?.slug ?? "<slug>";
}
