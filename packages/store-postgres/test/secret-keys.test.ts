/**
 * Signing secrets at rest (migration 0006): sealed with AES-256-GCM under the first key of
 * PARTNER_YIELD_SECRET_KEYS, opened with any listed key, found by SHA-256; plain rows (written
 * without a key, or before it) still read, and `rekeySecrets` seals them. Key rotation: a new key
 * first, rekey, the old key dropped. A database holding sealed secrets refuses to open without
 * their key.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type EventCredentials, hashApiKey } from "@partner-yield/core";
import { newEvent } from "@partner-yield/core/testing";
import { DEMO, gate, loadSandbox } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import {
  checkSecretKeys,
  dataSetOf,
  importData,
  openPostgresStores,
  PostgresEventStore,
  PostgresPartnerAdmin,
  PostgresPartnerStore,
  rekeySecrets,
  SecretKeyError,
  SecretKeyring,
} from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("secretkeys") : undefined;

const keyA = randomBytes(32).toString("base64");
const keyB = randomBytes(32).toString("base64");
const ringA = SecretKeyring.fromEnv({ PARTNER_YIELD_SECRET_KEYS: `a:${keyA}` })!;
const ringBA = SecretKeyring.fromEnv({ PARTNER_YIELD_SECRET_KEYS: `b:${keyB},a:${keyA}` })!;
const ringB = SecretKeyring.fromEnv({ PARTNER_YIELD_SECRET_KEYS: `b:${keyB}` })!;

interface Row {
  partner_id: string;
  secret: string | null;
  key_id: string | null;
  sealed: Buffer | null;
  secret_sha256: string;
  last_four: string;
}
const rows = async () =>
  (
    await db!.pool.query<Row>(
      "select partner_id, secret, key_id, sealed, secret_sha256, last_four from signing_secrets order by id",
    )
  ).rows;
const secretsOf = async (keys: SecretKeyring | undefined) =>
  (await new PostgresPartnerStore(db!.pool, undefined, undefined, keys).getPartner(DEMO.partnerId))!
    .signingSecrets;

describe("signing secrets encrypted at rest", () => {
  test("the key variables: ID:BASE64 list, one-key form, refusals that never quote a key", async () => {
    assert.equal(ringBA.currentId, "b");
    assert.deepEqual(ringBA.ids, ["b", "a"]);
    const single = SecretKeyring.fromEnv({ PARTNER_YIELD_SECRET_KEY: keyA })!;
    assert.match(single.currentId, /^k[0-9a-f]{8}$/, "a bare key's id is its fingerprint");
    assert.equal(SecretKeyring.fromEnv({}), undefined);
    for (const env of [
      { PARTNER_YIELD_SECRET_KEYS: "a:short" },
      { PARTNER_YIELD_SECRET_KEYS: `a:${keyA},a:${keyB}` },
      { PARTNER_YIELD_SECRET_KEYS: `bad id:${keyA}` },
      { PARTNER_YIELD_SECRET_KEY: keyA, PARTNER_YIELD_SECRET_KEYS: `b:${keyB}` },
    ]) {
      assert.throws(
        () => SecretKeyring.fromEnv(env),
        (error: Error) =>
          error instanceof SecretKeyError &&
          /PARTNER_YIELD_SECRET_KEY/.test(error.message) &&
          !error.message.includes(keyA) &&
          !error.message.includes(keyB),
      );
    }
    const sealed = ringA.seal("acme", DEMO.signingSecret);
    assert.equal(ringA.open("acme", "a", sealed.sealed!), DEMO.signingSecret);
    assert.throws(() => ringA.open("other", "a", sealed.sealed!), /does not open/, "bound to the partner");
    assert.throws(() => ringB.open("acme", "a", sealed.sealed!), /does not hold/);
  });

  test("plain rows read; an import with a key seals; rekey seals the rest; rotation to a new key", async () => {
    // Without a key (the sandbox): plain, as before.
    await importData(db!.pool, dataSetOf(loadSandbox()));
    const plain = await rows();
    assert.ok(plain.length >= 2);
    assert.ok(
      plain.every((r) => r.secret !== null && r.sealed === null && r.last_four === r.secret.slice(-4)),
    );
    const expected = await secretsOf(undefined);
    assert.ok(expected.includes(DEMO.signingSecret));

    // A new secret created with key a: sealed, never in plain text; both forms read together.
    const admin = new PostgresPartnerAdmin(db!.pool, { secretKeys: ringA });
    const created = await admin.createSigningSecret(DEMO.partnerId);
    assert.ok(created.ok);
    const newRow = (await rows()).at(-1)!;
    assert.equal(newRow.secret, null);
    assert.equal(newRow.key_id, "a");
    assert.ok(!newRow.sealed!.toString("latin1").includes(created.value.signingSecret));
    assert.equal(newRow.last_four, created.value.signingSecret.slice(-4));
    assert.equal(created.value.summary.lastFour, created.value.signingSecret.slice(-4));
    assert.deepEqual(await secretsOf(ringA), [...expected, created.value.signingSecret]);
    assert.equal(
      await checkSecretKeys(db!.pool, ringA).then((w) => /plain text/.test(w ?? "")),
      true,
      "a warning while plain rows remain",
    );
    await assert.rejects(checkSecretKeys(db!.pool, undefined), /encrypted under key a, which no key is set/);
    await assert.rejects(async () => secretsOf(undefined), /PARTNER_YIELD_SECRET_KEYS/);

    // A re-import with the key finds the secrets by SHA-256: nothing inserted twice.
    const reimport = await importData(db!.pool, dataSetOf(loadSandbox()), { secretKeys: ringA });
    assert.equal(reimport.signing_secrets.inserted, 0);

    // rekey with a: every plain row sealed, nothing left in plain text.
    const sealed = await rekeySecrets(db!.pool, ringA);
    assert.deepEqual([sealed.sealed, sealed.rekeyed, sealed.unchanged], [plain.length, 0, 1]);
    assert.ok((await rows()).every((r) => r.secret === null && r.key_id === "a"));
    assert.equal(await checkSecretKeys(db!.pool, ringA), undefined);
    assert.deepEqual(await secretsOf(ringA), [...expected, created.value.signingSecret]);

    // The event log's "still active" check finds a sealed secret by its SHA-256.
    const store = new PostgresEventStore(db!.pool);
    const credentials: EventCredentials = {
      keyHash: hashApiKey(DEMO.sandboxApiKey),
      signingSecret: DEMO.signingSecret,
    };
    const appended = await store.append({
      ...newEvent({ partnerId: DEMO.partnerId, idempotencyKey: "sealed-1", fingerprint: "a".repeat(64) }),
      environment: "sandbox",
      authorizedBy: credentials,
    });
    assert.equal(appended.status, "created");

    // Rotation: b first, a still listed: rekey moves every row to b; then a can go.
    const rotated = await rekeySecrets(db!.pool, ringBA);
    assert.deepEqual([rotated.sealed, rotated.rekeyed, rotated.unchanged], [0, plain.length + 1, 0]);
    assert.ok((await rows()).every((r) => r.key_id === "b"));
    assert.deepEqual(await secretsOf(ringB), [...expected, created.value.signingSecret]);
    await assert.rejects(
      checkSecretKeys(db!.pool, ringA),
      /under key b, which PARTNER_YIELD_SECRET_KEYS does not hold/,
    );

    // Stores open with the key; a production server without one is refused, naming the variable.
    const stores = await openPostgresStores(db!.pool, { secretKeys: ringB });
    assert.deepEqual(stores.warnings, []);
    await assert.rejects(openPostgresStores(db!.pool, {}), SecretKeyError);
    await assert.rejects(
      openPostgresStores(db!.pool, { requireSecretKeys: true }),
      /no key to encrypt the signing secrets at rest: set PARTNER_YIELD_SECRET_KEYS/,
    );
  });
});
