/**
 * `PostgresEventStore` checks an event's `authorizedBy` key and secret in the statement that claims
 * its key (CONTRACT §4, §5): one revoked by then stores nothing and answers `revoked`, checked
 * before the key's earlier event; in a batch, only the appends with a revoked credential are
 * refused, and a later append of the same key is judged on its own.
 */
import assert from "node:assert/strict";
import { type EventCredentials, hashApiKey, type NewEvent } from "@partner-yield/core";
import { newEvent } from "@partner-yield/core/testing";
import { DEMO, gate, loadSandbox } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { dataSetOf, importData, PostgresEventStore } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("credentials") : undefined;

const KEY_HASH = hashApiKey(DEMO.sandboxApiKey);
const ACTIVE: EventCredentials = { keyHash: KEY_HASH, signingSecret: DEMO.signingSecret };

function event(key: string, authorizedBy: EventCredentials | undefined, fingerprint = "a"): NewEvent {
  return {
    ...newEvent({ partnerId: DEMO.partnerId, idempotencyKey: key, fingerprint: fingerprint.repeat(64) }),
    environment: "sandbox",
    authorizedBy,
  };
}

describe("PostgresEventStore: credentials checked with the claim", () => {
  test("active credentials store; a revoked secret or key stores nothing, even for a stored key", async () => {
    await importData(db!.pool, dataSetOf(loadSandbox()));
    const store = new PostgresEventStore(db!.pool);
    const first = await store.append(event("cred-1", ACTIVE));
    assert.equal(first.status, "created");
    // No credentials given: not checked (a caller that does not ask).
    assert.equal((await store.append(event("cred-unchecked", undefined))).status, "created");

    // The rotated secret, revoked: events signed with it are refused, with the other accepted.
    const rotated: EventCredentials = { keyHash: KEY_HASH, signingSecret: DEMO.rotatedSigningSecret };
    assert.equal((await store.append(event("cred-rotated-ok", rotated))).status, "created");
    await db!.pool.query(
      "update signing_secrets set status = 'revoked', revoked_at = now() where secret = $1",
      [DEMO.rotatedSigningSecret],
    );
    assert.deepEqual(await store.append(event("cred-2", rotated)), {
      status: "revoked",
      credential: "signing_secret",
    });
    assert.equal(await store.find(DEMO.partnerId, "sandbox", "cred-2"), undefined, "nothing stored");
    // A retry of a stored event with the revoked secret gets no answer about it.
    assert.deepEqual(await store.append(event("cred-rotated-ok", rotated)), {
      status: "revoked",
      credential: "signing_secret",
    });
    assert.equal((await store.append(event("cred-3", ACTIVE))).status, "created");

    // A secret of another partner is not this partner's.
    const foreign: EventCredentials = { keyHash: KEY_HASH, signingSecret: DEMO.otherPartnerSigningSecret };
    assert.equal((await store.append(event("cred-foreign", foreign))).status, "revoked");

    // Concurrent appends (one statement): only the revoked one is refused; a later append of the
    // same key with active credentials is judged on its own and stored.
    const batch = await Promise.all([
      store.append(event("cred-batch-1", ACTIVE)),
      store.append(event("cred-batch-2", rotated)),
      store.append(event("cred-batch-2", ACTIVE)),
      store.append(event("cred-batch-3", ACTIVE)),
    ]);
    assert.deepEqual(
      batch.map((r) => r.status),
      ["created", "revoked", "created", "created"],
    );

    await db!.pool.query("update api_keys set status = 'revoked', revoked_at = now() where key_hash = $1", [
      KEY_HASH,
    ]);
    assert.deepEqual(await store.append(event("cred-4", ACTIVE)), {
      status: "revoked",
      credential: "api_key",
    });
    assert.equal(await store.find(DEMO.partnerId, "sandbox", "cred-4"), undefined);
    await store.close();
  });
});
