/**
 * The credentials published with partner-yield (the demo keys and signing secrets of the README,
 * `@partner-yield/core/demo` and the fixtures) never unlock production: `serve --env production` refuses to start on
 * data that holds one active, and `db import-fixtures --env production` refuses to write one
 * (CONTRACT §4, "Published credentials"). Messages name each credential by partner, kind and last
 * four characters, never in full.
 * @module
 */
import { hashApiKey, type KeyStore, type PartnerStore, type SandboxData } from "@partner-yield/core";
import { DEMO_CREDENTIALS } from "@partner-yield/core/demo";
import { nodeSha256 } from "@partner-yield/node-adapter";

/**
 * Every credential published with partner-yield (README, `DEMO_CREDENTIALS` of `@partner-yield/core/demo`, the fixtures): anyone can
 * read them, so none may ever unlock a production server (CONTRACT §4, "Published credentials").
 */
export const PUBLISHED_API_KEYS: readonly string[] = Object.freeze([
  DEMO_CREDENTIALS.sandboxApiKey,
  DEMO_CREDENTIALS.productionApiKey,
  DEMO_CREDENTIALS.revokedSandboxApiKey,
  DEMO_CREDENTIALS.otherPartnerSandboxApiKey,
]);
export const PUBLISHED_SIGNING_SECRETS: readonly string[] = Object.freeze([
  DEMO_CREDENTIALS.signingSecret,
  DEMO_CREDENTIALS.rotatedSigningSecret,
  DEMO_CREDENTIALS.otherPartnerSigningSecret,
]);

/** The published signing secrets by their hex SHA-256, which is how a sealed row is found (migration 0006). */
const PUBLISHED_SECRET_DIGESTS: ReadonlyMap<string, string> = new Map(
  PUBLISHED_SIGNING_SECRETS.map((secret) => [
    Buffer.from(nodeSha256(new TextEncoder().encode(secret))).toString("hex"),
    secret,
  ]),
);

/** One published credential found active in the data. */
export interface PublishedCredential {
  readonly partnerId: string;
  /** What it is, without the credential: `API key (live) ending in QT1C`, `signing secret ending in nBxt`. */
  readonly what: string;
}

const PUBLISHED_KEY_HASHES: ReadonlyMap<string, string> = new Map(
  PUBLISHED_API_KEYS.map((key) => [hashApiKey(key, nodeSha256), key]),
);

/**
 * The published credentials active in fixture data (before an import, or an in-memory server).
 * @example publishedInFixtures(loadFixtureDir("fixtures/")); // [{ partnerId: "northwind", what: "API key (test) ending in 5kDE" }, …]
 */
export function publishedInFixtures(
  data: Pick<SandboxData, "keyRecords" | "partnerList">,
): PublishedCredential[] {
  const found: PublishedCredential[] = [];
  for (const record of data.keyRecords) {
    const key = PUBLISHED_KEY_HASHES.get(record.keyHash);
    if (key !== undefined && record.status === "active")
      found.push({ partnerId: record.partnerId, what: `API key ${hint(key)}` });
  }
  for (const partner of data.partnerList)
    found.push(...publishedSecretsOf(partner.id, partner.signingSecrets));
  return found;
}

/**
 * The published credentials active in running stores (PostgreSQL or memory), looked up through
 * the ports: each published key by its hash, each partner's active secrets.
 * @example await publishedInStores(stores.keys, stores.partners, await listPartnerIds(pool));
 */
export async function publishedInStores(
  keys: KeyStore,
  partners: PartnerStore,
  partnerIds: Iterable<string>,
): Promise<PublishedCredential[]> {
  const found: PublishedCredential[] = [];
  for (const [keyHash, key] of PUBLISHED_KEY_HASHES) {
    const record = await keys.findByHash(keyHash);
    if (record !== undefined && record.status === "active")
      found.push({ partnerId: record.partnerId, what: `API key ${hint(key)}` });
  }
  for (const id of partnerIds) {
    const partner = await partners.getPartner(id);
    if (partner !== undefined) found.push(...publishedSecretsOf(partner.id, partner.signingSecrets));
  }
  return found;
}

/** What `publishedInDatabase` needs of a PostgreSQL client: `pool.query` fits. */
export type SqlQuery = (
  text: string,
  values: readonly unknown[],
) => Promise<{ rows: readonly Record<string, unknown>[] }>;

/**
 * The published credentials active in a partner-yield database, read with two statements (not
 * through the key store, whose lookups record a key's last use).
 * @example await publishedInDatabase((text, values) => pool.query(text, [...values]));
 */
export async function publishedInDatabase(query: SqlQuery): Promise<PublishedCredential[]> {
  const hashes = [...PUBLISHED_KEY_HASHES.keys()];
  const keys = await query(
    "select partner_id, key_hash from api_keys where status = 'active' and key_hash = any($1) order by id",
    [hashes],
  );
  const secrets = await query(
    "select partner_id, secret_sha256 from signing_secrets where status = 'active' and secret_sha256 = any($1) order by id",
    [[...PUBLISHED_SECRET_DIGESTS.keys()]],
  );
  return [
    ...keys.rows.map((row) => ({
      partnerId: String(row["partner_id"]),
      what: `API key ${hint(PUBLISHED_KEY_HASHES.get(String(row["key_hash"])) ?? "")}`,
    })),
    ...secrets.rows.map((row) => ({
      partnerId: String(row["partner_id"]),
      what: `signing secret ${hint(PUBLISHED_SECRET_DIGESTS.get(String(row["secret_sha256"])) ?? "")}`,
    })),
  ];
}

/**
 * Why production refuses `found`, and what to do: one line per credential, then the remedies.
 * @example process.stderr.write(publishedCredentialsMessage(found, "serve", "PostgreSQL postgres://…"));
 */
export function publishedCredentialsMessage(
  found: readonly PublishedCredential[],
  action: "serve" | "import",
  source: string,
): string {
  const lines = [
    `refusing to ${action === "serve" ? "serve" : "import into"} production: credentials published with partner-yield (anyone can read them in its README and source) are active in ${source}:`,
    ...found.map((c) => `  partner ${c.partnerId}: active ${c.what}`),
  ];
  if (action === "serve")
    lines.push(
      "Revoke each one (`partner-yield keys list --partner ID`, then `keys revoke KEY_ID`; `partner-yield secrets",
      "list --partner ID`, then `secrets revoke SECRET_ID --partner ID`), or serve your own data (--database-url,",
      "or --fixtures with your own files); the demo data is for --env sandbox.",
    );
  else
    lines.push(
      "Nothing was written. Import your own data for production (keys and secrets are best created with",
      "`partner-yield keys create` and `secrets create`, which print them once); the demo fixtures are for --env sandbox.",
    );
  return `${lines.join("\n")}\n`;
}

function publishedSecretsOf(partnerId: string, secrets: readonly string[]): PublishedCredential[] {
  return secrets
    .filter((secret) => PUBLISHED_SIGNING_SECRETS.includes(secret))
    .map((secret) => ({ partnerId, what: `signing secret ${hint(secret)}` }));
}

/** The credential's kind and last four characters: enough to find it, not to use it. */
function hint(credential: string): string {
  const kind = /^ypk_(test|live)_/.exec(credential)?.[1];
  return `${kind === undefined ? "" : `(${kind}) `}ending in ${credential.slice(-4)}`;
}
