/**
 * The `PartnerAdmin` contract as a suite (CONTRACT §4; docs/contract.md, "Keys and secrets"),
 * written once and run against every backend. Each change is checked where the API sees it —
 * through the backend's own `KeyStore` and `PartnerStore` — on the very next lookup.
 *
 * @example
 * import { describe, test } from "vitest"; // or node:test, or bun:test
 * runPartnerAdminSuite({
 *   name: "memory",
 *   makeAdmin: async () => { const admin = new MemoryPartnerAdmin(); return { admin, keys: admin.keys, partners: admin.partners, close: () => admin.close() }; },
 *   describe, test,
 * });
 */

import type { ApiKeySummary, PartnerAdmin } from "../admin/partner-admin.js";
import { hashApiKey, parseApiKey } from "../auth/api-key.js";
import { isSigningSecret } from "../auth/signing-secret.js";
import type { Result } from "../result.js";
import type { KeyStore } from "../stores/key-store.js";
import type { PartnerStore } from "../stores/partner-store.js";
import { assertDeepEqual, assertEqual, assertTrue, SuiteAssertionError } from "./assertions.js";
import { type Closable, type SuiteOptions, uniqueTag, using } from "./suite.js";

/** An admin and the read ports the API uses, over one backend. */
export interface AdministeredStores extends Closable {
  readonly admin: PartnerAdmin;
  readonly keys: KeyStore;
  readonly partners: PartnerStore;
}

export interface PartnerAdminSuiteOptions extends SuiteOptions {
  /** An admin and read ports over one backend; tests may share it (each adds partners of its own). */
  readonly makeAdmin: () => Promise<AdministeredStores>;
  /** How long `lastUsedAt` may take to appear after a lookup (it is written off the request's path). Default 10 s. */
  readonly lastUsedWithinMs?: number | undefined;
}

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The value, or a suite failure naming the refusal. */
function value<T>(result: Result<T>, what: string): T {
  if (result.ok) return result.value;
  throw new SuiteAssertionError(`${what}: refused ${result.code}: ${result.reason}`);
}

/** The code of a refusal, or a suite failure when it was accepted. */
function refusal(result: Result<unknown>, what: string): string {
  if (!result.ok) return result.code;
  throw new SuiteAssertionError(`${what}: expected a refusal, got ${JSON.stringify(result.value)}`);
}

const newId = () => `suite-${uniqueTag()}`;

/**
 * Names and labels a terminal or a listing must not be given: control characters (C0, DEL, C1,
 * ESC sequences), bidirectional controls, zero-width characters, line separators, and text shaped
 * like an API key or signing secret in any case.
 */
const UNSAFE_TEXTS: readonly string[] = [
  "a\nb",
  "tab\there",
  "title\u001b]0;pwn\u0007",
  "del\u007f",
  "csi\u009b2J",
  ...[0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c].map(
    (c) => `bidi ${String.fromCodePoint(c)}gnp.exe`,
  ),
  ...[0x200b, 0x200c, 0x200d, 0x2060, 0xfeff].map((c) => `zero${String.fromCodePoint(c)}width`),
  "line\u2028separator",
  "paragraph\u2029separator",
  "lone \ud800 surrogate",
  "my WHSEC_abcdef",
  "YPK_TEST_abcdef",
  "Ypk_Live_abc",
];

export function runPartnerAdminSuite(options: PartnerAdminSuiteOptions): void {
  const { describe, test, makeAdmin } = options;
  const lastUsedWithinMs = options.lastUsedWithinMs ?? 10_000;

  /** A new partner (verified or not) in the backend. */
  async function addPartner(admin: PartnerAdmin, verified = false): Promise<string> {
    const id = newId();
    value(await admin.addPartner({ id, name: `Partner ${id}`, verified }), `add ${id}`);
    return id;
  }

  describe(`PartnerAdmin conformance: ${options.name}`, () => {
    test("a partner is added unverified, without keys or secrets, and listed in id order; its id cannot be added twice", () =>
      using(makeAdmin(), async ({ admin, partners }) => {
        const tag = uniqueTag();
        const [b, a] = [`suite-${tag}-b`, `suite-${tag}-a`];
        const added = value(await admin.addPartner({ id: b, name: "Bé Wallet — ünïcode ✓" }), "add b");
        assertDeepEqual(
          { ...added, createdAt: "" },
          {
            id: b,
            name: "Bé Wallet — ünïcode ✓",
            verified: false,
            createdAt: "",
            activeKeys: { sandbox: 0, production: 0 },
            activeSigningSecrets: 0,
          },
        );
        assertTrue(RFC3339_UTC.test(added.createdAt), `createdAt ${added.createdAt} is RFC 3339 UTC`);
        value(await admin.addPartner({ id: a, name: "A", verified: true }), "add a");
        const listed = (await admin.listPartners()).filter((p) => p.id.startsWith(`suite-${tag}`));
        assertDeepEqual(
          listed.map((p) => [p.id, p.verified]),
          [
            [a, true],
            [b, false],
          ],
          "ordered by id, with verified",
        );
        assertEqual(refusal(await admin.addPartner({ id: b, name: "Other" }), "again"), "partner_exists");
        assertEqual(value(await admin.getPartner(b), "get b").name, "Bé Wallet — ünïcode ✓", "unchanged");
        // The API serves a partner added here at once (no secrets yet: events cannot verify).
        assertDeepEqual((await partners.getPartner(b))?.signingSecrets, [], "served without secrets");
      }));

    test("a malformed partner id or name is refused and adds nothing", () =>
      using(makeAdmin(), async ({ admin }) => {
        const before = (await admin.listPartners()).length;
        for (const id of ["", "Upper", "-dash-first", "a b", "é", "x".repeat(65), "a.b"]) {
          assertEqual(refusal(await admin.addPartner({ id, name: "N" }), id), "invalid_partner_id", id);
        }
        for (const name of ["", "   ", "x".repeat(201), ...UNSAFE_TEXTS]) {
          assertEqual(
            refusal(await admin.addPartner({ id: newId(), name }), JSON.stringify(name)),
            "invalid_partner_name",
          );
        }
        assertEqual((await admin.listPartners()).length, before, "nothing added");
        // Letters of any script, accents and emoji are names; the checks are not an ASCII filter.
        for (const name of ["Café Zürich", "東京ウォレット", "محفظة", "Acme 🚀"]) {
          assertEqual(value(await admin.addPartner({ id: newId(), name }), name).name, name, name);
        }
        assertEqual(refusal(await admin.getPartner(newId()), "unknown"), "partner_not_found");
        assertEqual(refusal(await admin.markPartnerVerified(newId()), "verify unknown"), "partner_not_found");
      }));

    test("a key is shown once: it parses, authenticates by its hash, and is listed by prefix and last four only", () =>
      using(makeAdmin(), async ({ admin, keys }) => {
        const partnerId = await addPartner(admin);
        const issued = value(
          await admin.createKey({ partnerId, environment: "sandbox", label: "mobile app" }),
          "create",
        );
        assertDeepEqual(parseApiKey(issued.apiKey), { ok: true, value: "sandbox" }, "a valid sandbox key");
        const s = issued.summary;
        assertDeepEqual(
          [s.partnerId, s.environment, s.status, s.prefix, s.lastFour, s.label, s.lastUsedAt, s.revokedAt],
          [partnerId, "sandbox", "active", "ypk_test_", issued.apiKey.slice(-4), "mobile app", null, null],
        );
        assertTrue(/^[1-9][0-9]*$/.test(s.id), `id ${s.id} is decimal digits`);
        assertTrue(RFC3339_UTC.test(s.createdAt), `createdAt ${s.createdAt}`);
        const record = await keys.findByHash(hashApiKey(issued.apiKey));
        assertDeepEqual(
          record,
          {
            keyHash: hashApiKey(issued.apiKey),
            // The key's id, as listed: what logs, metrics and traces name a key by (never the key).
            id: s.id,
            partnerId,
            environment: "sandbox",
            status: "active",
            label: "mobile app",
          },
          "the API finds it by its hash",
        );
        const listed = value(await admin.listKeys(partnerId), "list");
        assertDeepEqual(
          listed.map((k) => ({ ...k, lastUsedAt: null })),
          [s],
          "listed as created",
        );
        const text = JSON.stringify(listed);
        assertTrue(!text.includes(issued.apiKey.slice(9, -4)), "the list never holds the key");
        assertTrue(!text.includes(hashApiKey(issued.apiKey)), "nor its hash");

        const other = value(await admin.createKey({ partnerId, environment: "sandbox" }), "second key");
        assertTrue(other.apiKey !== issued.apiKey && other.summary.id !== s.id, "a new key each time");
        assertEqual(other.summary.label, null, "no label");
        assertEqual(value(await admin.getPartner(partnerId), "get").activeKeys.sandbox, 2, "two active");
      }));

    test("a key for an unknown partner, of an unknown environment or with a bad label is refused", () =>
      using(makeAdmin(), async ({ admin }) => {
        const partnerId = await addPartner(admin, true);
        const unknown = newId();
        assertEqual(
          refusal(await admin.createKey({ partnerId: unknown, environment: "sandbox" }), "unknown"),
          "partner_not_found",
        );
        for (const environment of ["live", "test", "Sandbox", "", "staging"]) {
          assertEqual(
            refusal(await admin.createKey({ partnerId, environment }), environment),
            "invalid_environment",
          );
        }
        for (const label of UNSAFE_TEXTS)
          assertEqual(
            refusal(
              await admin.createKey({ partnerId, environment: "sandbox", label }),
              JSON.stringify(label),
            ),
            "invalid_label",
          );
        assertEqual(refusal(await admin.listKeys(unknown), "list unknown"), "partner_not_found");
        assertEqual(
          refusal(await admin.listKeys(partnerId, { environment: "live" }), "list live"),
          "invalid_environment",
        );
        assertDeepEqual(value(await admin.listKeys(partnerId), "list"), [], "nothing was created");
      }));

    test("an unverified partner is refused a production key, by create and by promote, and nothing changes", () =>
      using(makeAdmin(), async ({ admin }) => {
        const partnerId = await addPartner(admin);
        value(await admin.createKey({ partnerId, environment: "sandbox" }), "sandbox key");
        const before = value(await admin.listKeys(partnerId), "before");
        const summaryBefore = value(await admin.getPartner(partnerId), "partner before");
        assertEqual(
          refusal(await admin.createKey({ partnerId, environment: "production" }), "create"),
          "partner_not_verified",
        );
        const refused = await admin.promote(partnerId);
        assertEqual(refusal(refused, "promote"), "partner_not_verified");
        assertTrue(!refused.ok && refused.reason.includes(partnerId), "the reason names the partner");
        assertEqual(refusal(await admin.promote(newId()), "promote unknown"), "partner_not_found");
        assertDeepEqual(value(await admin.listKeys(partnerId), "after"), before, "no key was added");
        assertDeepEqual(
          value(await admin.getPartner(partnerId), "partner after"),
          summaryBefore,
          "unchanged",
        );
      }));

    test("a verified partner is promoted once: its first production key; concurrent promotions issue one", () =>
      using(makeAdmin(), async ({ admin, keys }) => {
        const partnerId = await addPartner(admin);
        const verified = value(await admin.markPartnerVerified(partnerId), "verify");
        assertEqual(verified.verified, true);
        assertEqual(value(await admin.markPartnerVerified(partnerId), "verify again").verified, true);
        const attempts = await Promise.all(
          Array.from({ length: 8 }, () => admin.promote(partnerId, { label: "go-live" })),
        );
        const issued = attempts.filter((a) => a.ok);
        assertEqual(issued.length, 1, "exactly one promotion issues a key");
        for (const a of attempts)
          if (!a.ok) assertEqual(a.code, "already_in_production", "the others are refused");
        const live = value(issued[0]!, "promote");
        assertDeepEqual(parseApiKey(live.apiKey), { ok: true, value: "production" }, "a production key");
        assertEqual(live.summary.prefix, "ypk_live_");
        assertEqual(live.summary.label, "go-live");
        assertEqual((await keys.findByHash(hashApiKey(live.apiKey)))?.environment, "production");
        const again = await admin.promote(partnerId);
        assertEqual(refusal(again, "promote again"), "already_in_production");
        assertTrue(!again.ok && again.reason.includes(live.summary.id), "the reason names the live key");
        // More production keys are an explicit create; once every one is revoked, promote works again.
        const second = value(await admin.createKey({ partnerId, environment: "production" }), "create");
        value(await admin.revokeKey(live.summary.id), "revoke first");
        value(await admin.revokeKey(second.summary.id), "revoke second");
        value(await admin.promote(partnerId), "promote after revoking every production key");
        assertEqual(value(await admin.getPartner(partnerId), "get").activeKeys.production, 1);
      }));

    test("revoking a key is final: the next lookup finds it revoked; revoking again changes nothing", () =>
      using(makeAdmin(), async ({ admin, keys }) => {
        const partnerId = await addPartner(admin);
        const first = value(await admin.createKey({ partnerId, environment: "sandbox" }), "first");
        const second = value(await admin.createKey({ partnerId, environment: "sandbox" }), "second");
        const hash = hashApiKey(first.apiKey);
        assertEqual((await keys.findByHash(hash))?.status, "active");

        const revoked = value(await admin.revokeKey(first.summary.id), "revoke");
        assertEqual(revoked.changed, true);
        assertEqual(revoked.activeLeft, 1, "one sandbox key left");
        assertEqual(revoked.summary.status, "revoked");
        assertTrue(RFC3339_UTC.test(revoked.summary.revokedAt ?? ""), "revokedAt set");
        assertEqual((await keys.findByHash(hash))?.status, "revoked", "the API sees it on the next lookup");
        assertEqual((await keys.findByHash(hashApiKey(second.apiKey)))?.status, "active", "only that key");

        const again = value(await admin.revokeKey(first.summary.id), "revoke again");
        assertEqual(again.changed, false, "already revoked");
        assertEqual(again.summary.revokedAt, revoked.summary.revokedAt, "the first revocation's time");
        const last = value(await admin.revokeKey(second.summary.id), "revoke the last");
        assertEqual(last.activeLeft, 0, "the last active key may be revoked (a leak cannot wait)");
        assertDeepEqual(
          value(await admin.listKeys(partnerId), "list").map((k) => k.status),
          ["revoked", "revoked"],
        );
        // Nothing re-activates a key: a new one is a new key.
        const fresh = value(await admin.createKey({ partnerId, environment: "sandbox" }), "fresh");
        assertTrue(fresh.summary.id !== first.summary.id, "a new id");
        assertEqual((await keys.findByHash(hash))?.status, "revoked", "still revoked");
      }));

    test("revoking an unknown or malformed key id finds nothing", () =>
      using(makeAdmin(), async ({ admin }) => {
        for (const id of ["999999999999999999", "0", "-1", "1.5", "abc", "", " 1", "1e3", "9".repeat(40)]) {
          assertEqual(refusal(await admin.revokeKey(id), JSON.stringify(id)), "key_not_found", id);
        }
      }));

    test("keys are listed oldest first, filtered by environment; the partner counts its active ones", () =>
      using(makeAdmin(), async ({ admin }) => {
        const partnerId = await addPartner(admin, true);
        const created: ApiKeySummary[] = [];
        for (const environment of ["sandbox", "production", "sandbox"]) {
          created.push(value(await admin.createKey({ partnerId, environment }), environment).summary);
        }
        value(await admin.revokeKey(created[2]!.id), "revoke");
        assertDeepEqual(
          value(await admin.listKeys(partnerId), "all").map((k) => k.id),
          created.map((k) => k.id),
        );
        assertDeepEqual(
          value(await admin.listKeys(partnerId, { environment: "sandbox" }), "sandbox").map((k) => k.id),
          [created[0]!.id, created[2]!.id],
        );
        assertDeepEqual(value(await admin.getPartner(partnerId), "get").activeKeys, {
          sandbox: 1,
          production: 1,
        });
        // Another partner's keys are not listed.
        const other = await addPartner(admin);
        assertDeepEqual(value(await admin.listKeys(other), "other"), []);
      }));

    test("a key's use is recorded as lastUsedAt", () =>
      using(makeAdmin(), async ({ admin, keys }) => {
        const partnerId = await addPartner(admin);
        const issued = value(await admin.createKey({ partnerId, environment: "sandbox" }), "create");
        assertEqual(value(await admin.listKeys(partnerId), "unused")[0]?.lastUsedAt, null, "never used");
        await keys.findByHash(hashApiKey(issued.apiKey));
        const deadline = Date.now() + lastUsedWithinMs;
        let lastUsedAt: string | null | undefined = null;
        while (lastUsedAt === null && Date.now() < deadline) {
          lastUsedAt = value(await admin.listKeys(partnerId), "list")[0]?.lastUsedAt;
          if (lastUsedAt === null) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assertTrue(
          lastUsedAt !== null && lastUsedAt !== undefined,
          `lastUsedAt set within ${lastUsedWithinMs} ms`,
        );
        assertTrue(RFC3339_UTC.test(lastUsedAt), `lastUsedAt ${lastUsedAt}`);
        assertTrue(lastUsedAt >= issued.summary.createdAt, "not before the key was created");
      }));

    test("signing secrets: several active at once, all served; a revoked one is gone from the next lookup, for good", () =>
      using(makeAdmin(), async ({ admin, partners }) => {
        const partnerId = await addPartner(admin);
        const first = value(await admin.createSigningSecret(partnerId), "first");
        const second = value(await admin.createSigningSecret(partnerId), "second");
        for (const s of [first, second]) {
          assertTrue(isSigningSecret(s.signingSecret), "whsec_ + 32 base64url characters");
          assertEqual(s.summary.lastFour, s.signingSecret.slice(-4));
          assertEqual(s.summary.status, "active");
          assertEqual(s.summary.revokedAt, null);
        }
        assertTrue(first.signingSecret !== second.signingSecret, "two secrets");
        const served = async () => [...((await partners.getPartner(partnerId))?.signingSecrets ?? [])].sort();
        assertDeepEqual(await served(), [first.signingSecret, second.signingSecret].sort(), "both verify");
        const listed = value(await admin.listSigningSecrets(partnerId), "list");
        assertDeepEqual(
          listed.map((s) => s.id),
          [first.summary.id, second.summary.id],
          "oldest first",
        );
        assertTrue(
          !JSON.stringify(listed).includes(first.signingSecret.slice(6, -4)) &&
            !JSON.stringify(listed).includes(second.signingSecret.slice(6, -4)),
          "the list never holds a secret",
        );
        assertEqual(value(await admin.getPartner(partnerId), "get").activeSigningSecrets, 2);

        const revoked = value(await admin.revokeSigningSecret(partnerId, first.summary.id), "revoke");
        assertEqual(revoked.changed, true);
        assertEqual(revoked.activeLeft, 1);
        assertDeepEqual(await served(), [second.signingSecret], "only the second verifies now");
        const again = value(await admin.revokeSigningSecret(partnerId, first.summary.id), "again");
        assertEqual(again.changed, false);
        assertEqual(again.summary.revokedAt, revoked.summary.revokedAt);
        const last = value(await admin.revokeSigningSecret(partnerId, second.summary.id), "last");
        assertEqual(last.activeLeft, 0, "the last secret may be revoked");
        assertDeepEqual(await served(), [], "no secret verifies");
        value(await admin.createSigningSecret(partnerId), "a new one");
        assertEqual((await served()).length, 1, "a new secret, never a revoked one back");
      }));

    test("a secret is revoked only through its own partner; unknown partners and ids find nothing", () =>
      using(makeAdmin(), async ({ admin, partners }) => {
        const [owner, other] = [await addPartner(admin), await addPartner(admin)];
        const secret = value(await admin.createSigningSecret(owner), "create");
        assertEqual(
          refusal(await admin.revokeSigningSecret(other, secret.summary.id), "other partner"),
          "secret_not_found",
        );
        assertEqual(
          refusal(await admin.revokeSigningSecret(newId(), secret.summary.id), "unknown partner"),
          "partner_not_found",
        );
        for (const id of ["999999999999999999", "abc", "", secret.signingSecret]) {
          const refused = await admin.revokeSigningSecret(owner, id);
          assertEqual(refusal(refused, "id"), "secret_not_found");
          assertTrue(!refused.ok && !refused.reason.includes(secret.signingSecret), "never echoes a secret");
        }
        assertEqual(refusal(await admin.createSigningSecret(newId()), "create"), "partner_not_found");
        assertEqual(refusal(await admin.listSigningSecrets(newId()), "list"), "partner_not_found");
        assertDeepEqual(
          (await partners.getPartner(owner))?.signingSecrets,
          [secret.signingSecret],
          "still active",
        );
      }));
  });
}
