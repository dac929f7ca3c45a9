import { hashApiKey } from "../auth/api-key.js";

/**
 * The sandbox demo credentials. DEMO ONLY: they are published in the README and unlock nothing but
 * the embedded sandbox fixtures, which store only the keys' SHA-256 hashes.
 */
export const DEMO_CREDENTIALS = Object.freeze({
  /** Partner "northwind" (Northwind Wallet). */
  partnerId: "northwind",
  sandboxApiKey: "ypk_test_p5uYqWuTm2niNkMzdEPWdUA45x3OkztF4Y5kDE",
  /** The same partner's production key: refused by a sandbox server with 401 wrong_environment. */
  productionApiKey: "ypk_live_LfZpWB09SogjZAjRUO5GNK2JzZKPC65E0oQT1C",
  /** A revoked sandbox key of the same partner: 401 invalid_api_key. */
  revokedSandboxApiKey: "ypk_test_uD5ddqrV6nKQpJo0FT8PqCHPPaIYix761WR1cK",
  signingSecret: "whsec_1suBNkFDZXm7p89emMHkukazxczgnBxt",
  /** A second active secret of the same partner (rotation: either signs valid events). */
  rotatedSigningSecret: "whsec_jlAvN0iDdA1dxXuhYkvQ3MR3wVK7xtvR",
  /** Partner "contoso" (Contoso Fintech), to prove isolation. */
  otherPartnerId: "contoso",
  otherPartnerSandboxApiKey: "ypk_test_cZkDJCsivIBHA4wj8dvtSXnL6eLeciHz39LCI2",
  otherPartnerSigningSecret: "whsec_-qhsnPS-Lz4dXhZ7-WmrrJfbCddRaJ_v",
  /** A wallet with positions in several Northwind products. */
  walletWithPositions: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
});

/**
 * The demo production key's record. The fixtures hold only sandbox credentials; a sandbox server
 * on the demo fixtures adds this record so that a production key answers 401 `wrong_environment`
 * there, as a real partner's production key would on a sandbox deployment sharing its key table.
 */
export const DEMO_PRODUCTION_KEY_ROW = Object.freeze({
  key_hash: hashApiKey(DEMO_CREDENTIALS.productionApiKey),
  environment: "production",
  status: "active",
  label: "demo production key (sandbox only: answers 401 wrong_environment)",
} as const);

/**
 * The fixture files with `DEMO_PRODUCTION_KEY_ROW` added to the demo partner, when they are the
 * demo fixtures (they hold the demo sandbox key); any other files are returned as they are.
 * @example loadFixtures(withDemoProductionKey(readFixtureDir("fixtures/")));
 */
export function withDemoProductionKey<T extends Record<string, unknown>>(files: T): T {
  const partners = files["partners.json"];
  if (!Array.isArray(partners)) return files;
  const demo = partners.find(
    (p: unknown) =>
      typeof p === "object" && p !== null && (p as { id?: unknown }).id === DEMO_CREDENTIALS.partnerId,
  ) as { api_keys?: unknown } | undefined;
  const keys = demo?.api_keys;
  if (!Array.isArray(keys)) return files;
  const hashes = keys.map((k: unknown) =>
    typeof k === "object" && k !== null ? (k as { key_hash?: unknown }).key_hash : undefined,
  );
  if (!hashes.includes(DEMO_SANDBOX_KEY_HASH) || hashes.includes(DEMO_PRODUCTION_KEY_ROW.key_hash))
    return files;
  const extended = partners.map((p: unknown) =>
    p === demo ? { ...(p as object), api_keys: [...keys, { ...DEMO_PRODUCTION_KEY_ROW }] } : p,
  );
  return { ...files, "partners.json": extended };
}

/** How the demo fixtures are recognised: they hold the demo sandbox key. */
const DEMO_SANDBOX_KEY_HASH = hashApiKey(DEMO_CREDENTIALS.sandboxApiKey);
