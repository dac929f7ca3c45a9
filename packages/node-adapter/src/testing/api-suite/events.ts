/** The API suite, events (CONTRACT §5): see index.ts. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { signBody } from "@partner-yield/core";
import { DEMO, eventBody, expectProblem, json, type SuiteContext } from "./target.js";

export function eventsSuite(suite: SuiteContext): void {
  const { t } = suite;
  describe("events (CONTRACT §5)", () => {
    test("a new event is accepted with an integer id, duplicate false, and stored", async () => {
      const body = eventBody();
      const key = `acc-${crypto.randomUUID()}`;
      const res = await t.postEvent(body, { "idempotency-key": key });
      assert.equal(res.status, 200, res.text);
      const ack = json(res);
      assert.equal(ack["success"], true);
      assert.equal(ack["duplicate"], false);
      assert.ok(Number.isInteger(ack["event_id"]) && (ack["event_id"] as number) > 0);
      const stored = await t.api.events.find(DEMO.partnerId, "sandbox", key);
      assert.equal(stored?.id, ack["event_id"]);
      assert.equal(stored?.rawBody, body);
      assert.ok(res.headers["ratelimit"]);
    });
    test("the same request again → 200, same id, duplicate true, Idempotent-Replayed", async () => {
      const body = eventBody();
      const key = `dup-${crypto.randomUUID()}`;
      const first = json(await t.postEvent(body, { "idempotency-key": key }));
      const again = await t.postEvent(body, { "idempotency-key": key });
      assert.equal(again.status, 200);
      assert.deepEqual(json(again), { success: true, event_id: first["event_id"], duplicate: true });
      assert.equal(again.headers["idempotent-replayed"], "true");
    });
    test("a re-serialised retry (other key order and whitespace) is still a duplicate", async () => {
      const key = `reser-${crypto.randomUUID()}`;
      const body = eventBody({ data: { b: 1, a: [1, 2] } });
      const first = json(await t.postEvent(body, { "idempotency-key": key }));
      const parsed = JSON.parse(body) as Record<string, unknown>;
      const reserialised = JSON.stringify(
        { data: { a: [1, 2], b: 1 }, occurred_at: parsed["occurred_at"], event_type: parsed["event_type"] },
        null,
        2,
      );
      const again = await t.postEvent(reserialised, { "idempotency-key": key });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(json(again), { success: true, event_id: first["event_id"], duplicate: true });
    });
    test("the same key with another body → 422 idempotency_key_reused, nothing stored", async () => {
      const key = `reuse-${crypto.randomUUID()}`;
      const first = json(await t.postEvent(eventBody(), { "idempotency-key": key }));
      expectProblem(
        await t.postEvent(eventBody(), { "idempotency-key": key }),
        422,
        "idempotency_key_reused",
      );
      assert.equal((await t.api.events.find(DEMO.partnerId, "sandbox", key))?.id, first["event_id"]);
    });
    test("signatures: missing, malformed, short, wrong, tampered → 401 invalid_signature", async () => {
      const body = eventBody();
      const good = signBody(DEMO.signingSecret, new TextEncoder().encode(body));
      expectProblem(await t.postEvent(body, { "x-partner-signature": null }), 401, "invalid_signature");
      expectProblem(
        await t.postEvent(body, { "x-partner-signature": "zz".repeat(32) }),
        401,
        "invalid_signature",
      );
      expectProblem(
        await t.postEvent(body, { "x-partner-signature": good.slice(0, 62) }),
        401,
        "invalid_signature",
      );
      expectProblem(
        await t.postEvent(body, { "x-partner-signature": `${good}00` }),
        401,
        "invalid_signature",
      );
      expectProblem(
        await t.postEvent(body, { "x-partner-signature": "0".repeat(64) }),
        401,
        "invalid_signature",
      );
      expectProblem(await t.postEvent(`${body} `, { "x-partner-signature": good }), 401, "invalid_signature");
      const otherPartnerSig = signBody(DEMO.otherPartnerSigningSecret, new TextEncoder().encode(body));
      expectProblem(
        await t.postEvent(body, { "x-partner-signature": otherPartnerSig }),
        401,
        "invalid_signature",
      );
    });
    test("signatures: uppercase hex, a sha256= prefix and a rotated secret are accepted", async () => {
      const body = eventBody();
      const bytes = new TextEncoder().encode(body);
      assert.equal(
        (
          await t.postEvent(body, {
            "x-partner-signature": signBody(DEMO.signingSecret, bytes).toUpperCase(),
          })
        ).status,
        200,
      );
      const b2 = eventBody();
      assert.equal(
        (
          await t.postEvent(b2, {
            "x-partner-signature": `sha256=${signBody(DEMO.signingSecret, new TextEncoder().encode(b2))}`,
          })
        ).status,
        200,
      );
      const b3 = eventBody();
      assert.equal(
        (
          await t.postEvent(b3, {
            "x-partner-signature": signBody(DEMO.rotatedSigningSecret, new TextEncoder().encode(b3)),
          })
        ).status,
        200,
      );
    });
    test("the signature is over the raw bytes: non-ASCII bodies verify as sent", async () => {
      const body = eventBody({ data: { name: "Zoë 🚀", note: "\u00e9" } });
      const res = await t.postEvent(body);
      assert.equal(res.status, 200, res.text);
    });
    test("Idempotency-Key missing → 400 missing_idempotency_key; too long or not visible ASCII → 400 invalid_idempotency_key", async () => {
      expectProblem(
        await t.postEvent(eventBody(), { "idempotency-key": null }),
        400,
        "missing_idempotency_key",
      );
      expectProblem(
        await t.postEvent(eventBody(), { "idempotency-key": "k".repeat(256) }),
        400,
        "invalid_idempotency_key",
      );
      expectProblem(
        await t.postEvent(eventBody(), { "idempotency-key": "has space" }),
        400,
        "invalid_idempotency_key",
      );
      assert.equal((await t.postEvent(eventBody(), { "idempotency-key": "k".repeat(255) })).status, 200);
    });
    test("Content-Type must be application/json (charset utf-8 allowed) → else 415", async () => {
      expectProblem(
        await t.postEvent(eventBody(), { "content-type": "text/plain" }),
        415,
        "unsupported_media_type",
      );
      expectProblem(
        await t.postEvent(eventBody(), { "content-type": "application/json; charset=latin1" }),
        415,
        "unsupported_media_type",
      );
      expectProblem(await t.postEvent(eventBody(), { "content-type": null }), 415, "unsupported_media_type");
      assert.equal(
        (await t.postEvent(eventBody(), { "content-type": "application/json; charset=UTF-8" })).status,
        200,
      );
    });
    test("invalid JSON → 400 invalid_json", async () => {
      expectProblem(await t.postEvent("{not json"), 400, "invalid_json");
      expectProblem(await t.postEvent(""), 400, "invalid_json");
    });
    test("schema violations → 400 invalid_event with JSON pointers", async () => {
      const missing = expectProblem(
        await t.postEvent(JSON.stringify({ event_type: "partner.user.created", data: {} })),
        400,
        "invalid_event",
      );
      assert.ok((missing["errors"] as { pointer: string }[]).some((e) => e.pointer === "/body/occurred_at"));
      const unknown = expectProblem(await t.postEvent(eventBody({ extra: 1 })), 400, "invalid_event");
      assert.ok((unknown["errors"] as { pointer: string }[]).some((e) => e.pointer === "/body/extra"));
      expectProblem(
        await t.postEvent(eventBody({ event_type: "partner.user.deleted" })),
        400,
        "invalid_event",
      );
      expectProblem(
        await t.postEvent(eventBody({ occurred_at: "2026-11-20T10:15:00" })),
        400,
        "invalid_event",
      );
      expectProblem(await t.postEvent(eventBody({ occurred_at: "yesterday" })), 400, "invalid_event");
      expectProblem(await t.postEvent(eventBody({ data: [1] })), 400, "invalid_event");
      expectProblem(await t.postEvent("[1,2]"), 400, "invalid_event");
      let deep: unknown = {};
      for (let i = 0; i < 100; i++) deep = { d: deep };
      expectProblem(await t.postEvent(eventBody({ data: deep })), 400, "invalid_event");
    });
    test("numbers a JavaScript number cannot hold exactly → 400 invalid_event (no false duplicates)", async () => {
      for (const raw of ["12345678901234567891", "1e400", "0.12345678901234567", "-1e-320"]) {
        const body = `{"event_type":"partner.reconciliation.confirmed","occurred_at":"2026-11-20T10:15:00Z","data":{"amount":${raw}}}`;
        const problem = expectProblem(await t.postEvent(body), 400, "invalid_event");
        assert.match(String(problem["detail"]), /as strings/, raw);
      }
      for (const raw of ["9007199254740991", "0.1", "1e20", "-0.0", "123456789012345"]) {
        const body = `{"event_type":"partner.reconciliation.confirmed","occurred_at":"2026-11-20T10:15:00Z","data":{"amount":${raw},"s":"12345678901234567891"}}`;
        assert.equal((await t.postEvent(body)).status, 200, raw);
      }
    });
    test("occurred_at is RFC 3339: lowercase t/z and a leap second are accepted, impossible dates are not", async () => {
      for (const at of ["2026-11-20t10:15:00z", "2016-12-31T23:59:60Z", "2026-11-20T10:15:00.123456+05:30"]) {
        assert.equal((await t.postEvent(eventBody({ occurred_at: at }))).status, 200, at);
      }
      for (const at of [
        "2026-02-29T10:15:00Z",
        "2026-11-20T24:00:00Z",
        "2026-11-20T10:15:00+24:00",
        "2026-11-20 10:15:00Z",
      ]) {
        expectProblem(await t.postEvent(eventBody({ occurred_at: at })), 400, "invalid_event");
      }
    });
    test("the event's data is stored exactly as parsed, __proto__ included", async () => {
      const key = `proto-${crypto.randomUUID()}`;
      const body =
        '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"__proto__":{"x":1},"b":2}}';
      assert.equal((await t.postEvent(body, { "idempotency-key": key })).status, 200);
      const stored = await t.api.events.find(DEMO.partnerId, "sandbox", key);
      assert.ok(stored !== undefined && Object.hasOwn(stored.data, "__proto__"));
      assert.equal(stored.data["b"], 2);
    });
    test("X-Partner-Event must equal event_type → 400 event_type_mismatch", async () => {
      expectProblem(
        await t.postEvent(eventBody(), { "x-partner-event": "partner.user.kyc_updated" }),
        400,
        "event_type_mismatch",
      );
      expectProblem(await t.postEvent(eventBody(), { "x-partner-event": null }), 400, "event_type_mismatch");
    });
    test("X-Partner-Event must equal event_type exactly (case included)", async () => {
      expectProblem(
        await t.postEvent(eventBody(), { "x-partner-event": "Partner.User.Created" }),
        400,
        "event_type_mismatch",
      );
    });
    test("a body over the limit → 413 payload_too_large", async () => {
      const big = eventBody({ data: { blob: "x".repeat(70_000) } });
      expectProblem(await t.postEvent(big), 413, "payload_too_large");
    });
    test("order of checks: auth → size → content type → signature → key → JSON → schema → header", async () => {
      const big = eventBody({ data: { blob: "x".repeat(70_000) } });
      expectProblem(await t.postEvent(big, { "x-api-key": null }), 401, "missing_api_key");
      expectProblem(
        await t.postEvent(big, { "content-type": "text/plain", "x-partner-signature": null }),
        413,
        "payload_too_large",
      );
      expectProblem(
        await t.postEvent(eventBody(), { "content-type": "text/plain", "x-partner-signature": null }),
        415,
        "unsupported_media_type",
      );
      expectProblem(
        await t.postEvent(eventBody(), { "x-partner-signature": null, "idempotency-key": null }),
        401,
        "invalid_signature",
      );
      expectProblem(await t.postEvent("{oops", { "idempotency-key": null }), 400, "missing_idempotency_key");
      expectProblem(await t.postEvent("{oops", { "x-partner-event": "nope" }), 400, "invalid_json");
      expectProblem(
        await t.postEvent(eventBody({ extra: true }), { "x-partner-event": "nope" }),
        400,
        "invalid_event",
      );
    });
    test("a refused request leaves no record: fixing it and resending with the same key is new", async () => {
      const key = `fix-${crypto.randomUUID()}`;
      const body = eventBody();
      expectProblem(
        await t.postEvent(body, { "idempotency-key": key, "x-partner-signature": "0".repeat(64) }),
        401,
        "invalid_signature",
      );
      expectProblem(
        await t.postEvent(body, { "idempotency-key": key, "x-partner-event": "partner.user.kyc_updated" }),
        400,
        "event_type_mismatch",
      );
      assert.equal(await t.api.events.find(DEMO.partnerId, "sandbox", key), undefined);
      const res = await t.postEvent(body, { "idempotency-key": key });
      assert.equal(json(res)["duplicate"], false);
    });
    test("idempotency keys are compared exactly: Key-A and key-A are two events", async () => {
      const suffix = crypto.randomUUID();
      const a = await t.postEvent(eventBody(), { "idempotency-key": `Key-A-${suffix}` });
      const b = await t.postEvent(eventBody(), { "idempotency-key": `key-A-${suffix}` });
      assert.equal(a.status, 200, a.text);
      assert.equal(b.status, 200, b.text);
      assert.equal(json(b)["duplicate"], false);
      assert.equal(
        (await t.api.events.find(DEMO.partnerId, "sandbox", `key-A-${suffix}`))?.id,
        json(b)["event_id"],
      );
    });
    test("idempotency is scoped per partner", async () => {
      const key = `scope-${crypto.randomUUID()}`;
      const body = eventBody();
      const a = json(await t.postEvent(body, { "idempotency-key": key }));
      const b = json(
        await t.postEvent(body, {
          "idempotency-key": key,
          "x-api-key": DEMO.otherPartnerSandboxApiKey,
          "x-partner-signature": signBody(DEMO.otherPartnerSigningSecret, new TextEncoder().encode(body)),
        }),
      );
      assert.equal(b["duplicate"], false);
      assert.notEqual(a["event_id"], b["event_id"]);
    });
    test("ids increase in acceptance order", async () => {
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push(json(await t.postEvent(eventBody()))["event_id"] as number);
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
      );
      assert.equal(new Set(ids).size, 5);
    });
    test("100 concurrent submissions of one key produce exactly one event", async () => {
      const key = `race-${crypto.randomUUID()}`;
      const body = eventBody();
      const results = await Promise.all(
        Array.from({ length: 100 }, () => t.postEvent(body, { "idempotency-key": key })),
      );
      assert.ok(
        results.every((r) => r.status === 200),
        results.map((r) => r.status).join(","),
      );
      const acks = results.map(json);
      assert.equal(new Set(acks.map((a) => a["event_id"])).size, 1);
      assert.equal(acks.filter((a) => a["duplicate"] === false).length, 1);
      const all = await t.api.events.list(0, 100_000);
      assert.equal(all.filter((e) => e.idempotencyKey === key).length, 1);
    });
  });
}
