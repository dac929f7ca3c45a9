/** The demo fixtures with credentials of their own, for tests of a production server. */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey, generateSigningSecret, hashApiKey } from "@partner-yield/core";
import { DEMO_CREDENTIALS } from "@partner-yield/core/demo";
import { DEFAULT_FIXTURES_DIR } from "../fixture-dir.js";

/** A copy of the demo fixtures whose keys and secrets are fresh (never published): for production. */
export interface PrivateFixtures {
  readonly dir: string;
  readonly sandboxApiKey: string;
  readonly productionApiKey: string;
  readonly signingSecret: string;
  /** Removes the directory. */
  remove(): void;
}

/**
 * The demo fixtures with every credential replaced by a fresh one, in a temporary directory: a
 * production server refuses the published ones (CONTRACT §4, "Published credentials").
 * @example const fx = privateFixtures(); startCli(["--env", "production", "--fixtures", fx.dir]);
 */
export function privateFixtures(): PrivateFixtures {
  const dir = mkdtempSync(join(tmpdir(), "py-private-fixtures-"));
  cpSync(DEFAULT_FIXTURES_DIR, dir, { recursive: true });
  const sandboxApiKey = generateApiKey("sandbox");
  const productionApiKey = generateApiKey("production");
  const signingSecret = generateSigningSecret();
  const partners = JSON.parse(readFileSync(join(dir, "partners.json"), "utf8")) as {
    id: string;
    signing_secrets: string[];
    api_keys: { key_hash: string; environment: string; status: string; label?: string }[];
  }[];
  for (const partner of partners) {
    const own = partner.id === DEMO_CREDENTIALS.partnerId;
    partner.signing_secrets = own ? [signingSecret] : [generateSigningSecret()];
    partner.api_keys = own
      ? [
          {
            key_hash: hashApiKey(sandboxApiKey),
            environment: "sandbox",
            status: "active",
            label: "private sandbox",
          },
          {
            key_hash: hashApiKey(productionApiKey),
            environment: "production",
            status: "active",
            label: "private production",
          },
        ]
      : [{ key_hash: hashApiKey(generateApiKey("sandbox")), environment: "sandbox", status: "active" }];
  }
  writeFileSync(join(dir, "partners.json"), JSON.stringify(partners, null, 2));
  return {
    dir,
    sandboxApiKey,
    productionApiKey,
    signingSecret,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
