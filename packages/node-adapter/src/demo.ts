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
