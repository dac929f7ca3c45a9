/**
 * Inbound partner events (interface.md §4.5, §5.5, §6; CONTRACT §5): signed over the raw bytes,
 * idempotent by key and fingerprint, validated in a fixed order, and a refused request leaves
 * nothing behind. Every event this suite sends carries a key unique to the run.
 * @module
 */
import type { Exchange } from "../http/client.js";
import { contract, decision, GAPS, spec } from "./citations.js";
import {
  type CheckContext,
  type EventRequest,
  excerpt,
  isRecord,
  isRefusal,
  refusalShape,
} from "./context.js";
import type { CheckDefinition } from "./definition.js";

const EVENT_TYPES = ["partner.user.created", "partner.user.kyc_updated", "partner.reconciliation.confirmed"];
const encoder = new TextEncoder();
/** EVT-22 streams up to this much (well past what socket buffers absorb) in chunks of CHUNK_BYTES. */
const STREAM_BYTES = 32 * 1024 * 1024;
const CHUNK_BYTES = 16 * 1024;
/** CONTRACT §5's default body limit. */
const LIMIT_BYTES = 64 * 1024;

/**
 * EVT-22's request: a signed-looking event whose chunked body grows far past the limit. It stops
 * as soon as the answer arrives; once past the limit it waits for the answer before writing on
 * (up to 3 s, at most half the timeout), so a server that refused while reading is not written
 * into after its close (EPIPE, and a reset that may discard its 413) unless it is slower than that.
 */
async function streamOversized(t: CheckContext) {
  const head = encoder.encode(
    `{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{"pad":"`,
  );
  const chunk = encoder.encode("x".repeat(CHUNK_BYTES));
  const patience = Math.min(ANSWER_WAIT_MS, (t.inputs.timeoutMs ?? 15_000) / 2);
  const { method, path, headers } = t.eventRequest({ body: "", signature: { literal: "0".repeat(64) } });
  return t.request({
    method,
    path,
    headers: headers ?? {},
    stream: async function* (answered) {
      yield head;
      let paused = false;
      for (let sent = 0; sent < STREAM_BYTES && !answered(); sent += chunk.length) {
        yield chunk;
        if (!paused && sent + chunk.length > LIMIT_BYTES) {
          paused = true;
          for (let waited = 0; waited < patience && !answered(); waited += 10)
            await new Promise((resolve) => setTimeout(resolve, 10));
        } else if (sent % (256 * 1024) === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      if (!answered()) yield encoder.encode(`"}}`);
    },
  });
}

/** How long EVT-22 waits for an answer past the limit before it writes on (a buffering proxy needs the rest). */
const ANSWER_WAIT_MS = 3000;

interface Ack {
  readonly eventId: number;
  readonly duplicate: boolean;
}

/** An acknowledgement as the wire spells it: `{"event_id": 7, "duplicate": false}`. */
function wire(ack: Ack): string {
  return JSON.stringify({ event_id: ack.eventId, duplicate: ack.duplicate });
}

/**
 * An accepted event: 200 `{ success: true, event_id: integer, duplicate: boolean }` (interface.md
 * §4.5). At level `spec` a refused well-formed event is skipped, not failed: interface.md §6 leaves
 * the content of `data` open, so a deployment may want more in it than this suite sends. Unless
 * the refusal is the target's answer to a wrong signature (the preflight proved the secret right),
 * or `content` is "accepted": the same content was accepted before (a repeat must be acknowledged).
 */
function expectAck(t: CheckContext, ex: Exchange, what: string, content: "open" | "accepted" = "open"): Ack {
  const status = t.status(ex);
  if (!t.reference && content === "open" && status < 500 && isRefusal(ex)) {
    if (t.refusedAsBadSignature(ex))
      t.failWith(
        "status",
        `${what}: refused exactly as a wrong signature is (HTTP ${status}${codeOf(ex)}), though signed with the secret the preflight verified`,
        ex,
      );
    t.skip(
      `${what}: the target refused a well-formed, correctly signed event (HTTP ${status}: ${excerpt(ex.response?.text ?? "", 160)}); ` +
        "interface.md §6 leaves the content of data open, so this suite cannot know what it wants",
    );
  }
  if (status >= 500) t.failWith("server_error", `${what}: server error ${status}${codeOf(ex)}`, ex);
  if (status !== 200) t.failWith("status", `${what}: expected 200, got ${status}${codeOf(ex)}`, ex);
  const body = t.json(ex);
  t.checkWith("schema", isRecord(body), `${what}: the body is not a JSON object`, ex);
  t.checkWith(
    "schema",
    body["success"] === true,
    `${what}: "success" should be true, got ${JSON.stringify(body["success"])}`,
    ex,
  );
  const id = body["event_id"];
  t.checkWith(
    "schema",
    typeof id === "number" && Number.isInteger(id),
    `${what}: "event_id" should be an integer, got ${JSON.stringify(id)}`,
    ex,
  );
  if (t.reference) t.check(id > 0, `${what}: "event_id" should be positive, got ${id}`, ex);
  t.checkWith(
    "schema",
    typeof body["duplicate"] === "boolean",
    `${what}: "duplicate" should be a boolean, got ${JSON.stringify(body["duplicate"])}`,
    ex,
  );
  return { eventId: id, duplicate: body["duplicate"] };
}

function expectNew(t: CheckContext, ex: Exchange, what: string): Ack {
  const ack = expectAck(t, ex, what);
  t.check(!ack.duplicate, `${what}: a new event should have "duplicate": false`, ex);
  return ack;
}

function codeOf(ex: Exchange): string {
  const label = refusalShape(ex).label;
  return label === undefined ? "" : ` ${label}`;
}

/** The same event serialised differently: keys reversed, indented, a unicode escape. */
function reserialised(event: Record<string, unknown>): string {
  const reversed: Record<string, unknown> = {};
  for (const key of Object.keys(event).reverse()) reversed[key] = event[key];
  return JSON.stringify(reversed, null, 2).replace(/[é]/g, "\\u00e9");
}

/** A body with insignificant whitespace, its keys out of order and a unicode escape: not what JSON.stringify writes. */
function oddlySpelled(t: CheckContext): string {
  const id = `u_${t.inputs.runTag}_raw`;
  return `{ "data" : { "name" : "Ren\\u00e9e", "user_id" : "${id}" } ,\n  "occurred_at" : "2026-11-20T10:15:00+02:00", "event_type":"partner.user.created" }\n`;
}

function withPointers(t: CheckContext, ex: Exchange, pointer: string, what: string): void {
  if (!t.reference) return;
  const body = t.json(ex);
  const errors = isRecord(body) ? body["errors"] : undefined;
  const pointers = Array.isArray(errors) ? errors.filter(isRecord).map((e) => e["pointer"]) : [];
  t.checkWith(
    "schema",
    pointers.some((p) => typeof p === "string" && p.startsWith(pointer)),
    `${what}: "errors" should point at ${pointer}, got ${JSON.stringify(pointers)}`,
    ex,
  );
}

const ACCEPTED = spec(
  "§4.5",
  "Response (HTTP 200): `{ success: boolean, event_id: integer, duplicate: boolean }`.",
);
const EVENT_ID = contract(
  "§5",
  "`event_id`: a positive integer, unique within a store, increasing in the order events are accepted.",
);
const HEADERS_REQUIRED = spec("§4.5", "Headers (all required):");
const SIGNATURE_HEADER = spec(
  "§4.5",
  "| X-Partner-Signature | lowercase-or-plain hex of HMAC-SHA256 over the raw request body, keyed with a shared secret |",
);
const SIGNATURE_REQUIRED = spec(
  "§5",
  "The event endpoint additionally requires `X-Partner-Signature`, the hex encoding of HMAC-SHA256 of the raw body with a shared secret.",
);
const INVALID_SIGNATURE = contract(
  "§5",
  "signature (`401 invalid_signature`: missing, not 64 hex digits in either case — a leading `sha256=` is tolerated — or no match, compared in constant time over the **raw bytes**)",
);

const SIGNED: CheckDefinition["needs"] = ["signingSecret"];

export const EVENT_CHECKS: readonly CheckDefinition[] = [
  {
    id: "EVT-01",
    kind: "scenario",
    title: "A signed event is accepted with a new integer event_id",
    category: "events",
    level: "spec",
    cites: [ACCEPTED, spec("§6", "A newly accepted event yields an integer `event_id` in the response.")],
    tolerates: [GAPS.eventData],
    reference: { asserts: "event_id positive", cites: [EVENT_ID] },
    failure: "status",
    cost: 1,
    needs: SIGNED,
    async run(t: CheckContext) {
      const ex = await t.postEvent({ body: t.newEvent() });
      expectNew(t, ex, "a new signed event");
    },
  },
  {
    id: "EVT-02",
    kind: "scenario",
    title: "The same request again is acknowledged as a duplicate",
    category: "events",
    level: "spec",
    cites: [
      spec("§4.5", "A repeated request is also acknowledged with 200; `duplicate` is then true."),
      spec("§6", "When the same event is submitted again, the service answers 200 with `duplicate` true."),
    ],
    tolerates: [GAPS.eventData],
    reference: {
      asserts: "the original event_id and Idempotent-Replayed: true",
      cites: [
        contract(
          "§5",
          "same key, same fingerprint → `200 {success:true, event_id: <the original>, duplicate:true}` and header `Idempotent-Replayed: true`.",
        ),
      ],
    },
    failure: "state",
    cost: 2,
    needs: SIGNED,
    async run(t: CheckContext) {
      const key = t.newIdempotencyKey();
      const body = JSON.stringify(t.newEvent());
      const firstEx = await t.postEvent({ body, idempotencyKey: key });
      const first = expectNew(t, firstEx, "the first request");
      const again = await t.postEvent({ body, idempotencyKey: key });
      const second = expectAck(t, again, "the same request again", "accepted");
      t.check(second.duplicate, `the repeated request should have "duplicate": true`, firstEx, again);
      if (t.reference) {
        t.check(
          second.eventId === first.eventId,
          `the duplicate should carry the original event_id ${first.eventId}, got ${second.eventId}`,
          firstEx,
          again,
        );
        t.check(
          t.header(again, "idempotent-replayed") === "true",
          "the duplicate should carry the header Idempotent-Replayed: true",
          firstEx,
          again,
        );
      }
    },
  },
  {
    id: "EVT-03",
    kind: "scenario",
    title: "A retry that re-serialises the same event is still a duplicate",
    category: "events",
    level: "reference",
    cites: [
      contract(
        "§5",
        "The fingerprint is SHA-256 of the canonical JSON of the parsed body (keys sorted, no insignificant whitespace), so a retry that re-serialises the same event is still a duplicate.",
      ),
    ],
    failure: "state",
    cost: 2,
    needs: SIGNED,
    async run(t: CheckContext) {
      const key = t.newIdempotencyKey();
      const event = t.newEvent("partner.user.kyc_updated", { kyc_status: "approved", name: "Chloé" });
      const firstEx = await t.postEvent({ body: JSON.stringify(event), idempotencyKey: key });
      const first = expectNew(t, firstEx, "the first request");
      const again = await t.postEvent({ body: reserialised(event), idempotencyKey: key });
      const status = t.status(again);
      if (status !== 200)
        t.fail(
          `the same event re-serialised (keys reordered, indented, escaped): expected 200, got ${status}${codeOf(again)}`,
          firstEx,
          again,
        );
      const second = expectAck(t, again, "the same event re-serialised");
      t.check(
        second.duplicate && second.eventId === first.eventId,
        `the re-serialised retry should answer "duplicate": true with the first "event_id": ${first.eventId}, got ${wire(second)}`,
        firstEx,
        again,
      );
    },
  },
  {
    id: "EVT-04",
    kind: "scenario",
    title: "Reusing an Idempotency-Key for a different event is refused",
    category: "events",
    level: "reference",
    cites: [contract("§5", "same key, different fingerprint → `422 idempotency_key_reused`.")],
    failure: "state",
    cost: 2,
    needs: SIGNED,
    async run(t: CheckContext) {
      const key = t.newIdempotencyKey();
      const first = await t.postEvent({
        body: t.newEvent("partner.user.created", { n: 1 }),
        idempotencyKey: key,
      });
      expectNew(t, first, "the first event");
      const reuse = await t.postEvent({
        body: t.newEvent("partner.user.created", { n: 2 }),
        idempotencyKey: key,
      });
      t.expectRefused(
        reuse,
        "another event under the same Idempotency-Key",
        { status: 422, code: "idempotency_key_reused" },
        [first],
      );
    },
  },
  {
    id: "EVT-05",
    kind: "scenario",
    title: "An event without X-Partner-Signature is refused",
    category: "events",
    level: "spec",
    cites: [SIGNATURE_REQUIRED, SIGNATURE_HEADER],
    tolerates: [GAPS.statusCodes],
    reference: { asserts: "401 invalid_signature", cites: [INVALID_SIGNATURE] },
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const ex = await t.postEvent({ body: t.newEvent(), signature: "none" });
      t.expectRefused(ex, "an unsigned event", { status: 401, code: "invalid_signature" });
    },
  },
  {
    id: "EVT-06",
    kind: "scenario",
    title: "An event signed with another secret is refused",
    category: "events",
    level: "spec",
    cites: [SIGNATURE_REQUIRED, SIGNATURE_HEADER],
    tolerates: [GAPS.statusCodes],
    reference: { asserts: "401 invalid_signature", cites: [INVALID_SIGNATURE] },
    failure: "status",
    cost: 1,
    async run(t: CheckContext) {
      const body = JSON.stringify(t.newEvent());
      const wrong = [...t.randomBytes(32)].map((b) => b.toString(16).padStart(2, "0")).join("");
      const ex = await t.postEvent({ body, signature: { literal: wrong } });
      t.expectRefused(ex, "an event with a signature that matches no secret", {
        status: 401,
        code: "invalid_signature",
      });
    },
  },
  {
    id: "EVT-07",
    kind: "scenario",
    title: "A signature that is not 64 hex digits is refused",
    category: "events",
    level: "spec",
    cites: [SIGNATURE_HEADER],
    tolerates: [GAPS.statusCodes],
    reference: { asserts: "401 invalid_signature", cites: [INVALID_SIGNATURE] },
    failure: "status",
    cost: 3,
    async run(t: CheckContext) {
      const hex = [...t.randomBytes(33)].map((b) => b.toString(16).padStart(2, "0")).join("");
      for (const [what, literal] of [
        ["63 hex digits", hex.slice(0, 63)],
        ["65 hex digits", hex.slice(0, 65)],
        ["64 characters that are not hex", "z".repeat(64)],
      ] as const) {
        const ex = await t.postEvent({ body: t.newEvent(), signature: { literal } });
        t.expectRefused(ex, `a signature of ${what}`, { status: 401, code: "invalid_signature" });
      }
    },
  },
  {
    id: "EVT-08",
    kind: "scenario",
    title: "A body changed after signing is refused",
    category: "events",
    level: "spec",
    cites: [SIGNATURE_REQUIRED],
    tolerates: [GAPS.statusCodes],
    reference: { asserts: "401 invalid_signature", cites: [INVALID_SIGNATURE] },
    failure: "status",
    cost: 1,
    needs: SIGNED,
    async run(t: CheckContext) {
      const original = JSON.stringify(t.newEvent("partner.reconciliation.confirmed", { amount: "100.00" }));
      const tampered = original.replace('"100.00"', '"900.00"');
      const ex = await t.postEvent({ body: tampered, signature: { over: original } });
      t.expectRefused(ex, "a body altered after it was signed", { status: 401, code: "invalid_signature" });
    },
  },
  {
    id: "EVT-09",
    kind: "scenario",
    title: "Upper-case hex and a sha256= prefix are accepted",
    category: "events",
    level: "reference",
    cites: [contract("§5", "not 64 hex digits in either case — a leading `sha256=` is tolerated —")],
    failure: "status",
    cost: 2,
    needs: SIGNED,
    async run(t: CheckContext) {
      expectNew(
        t,
        await t.postEvent({ body: t.newEvent(), signature: "uppercase" }),
        "an upper-case hex signature",
      );
      expectNew(
        t,
        await t.postEvent({ body: t.newEvent(), signature: "prefixed" }),
        "a sha256=-prefixed signature",
      );
    },
  },
  {
    id: "EVT-10",
    kind: "scenario",
    title: "The signature covers the raw bytes, not a re-serialisation",
    category: "events",
    level: "spec",
    cites: [SIGNATURE_HEADER, SIGNATURE_REQUIRED],
    tolerates: [GAPS.eventData],
    failure: "status",
    cost: 2,
    needs: SIGNED,
    async run(t: CheckContext) {
      const raw = oddlySpelled(t);
      expectNew(
        t,
        await t.postEvent({ body: raw }),
        "an event signed over its exact (unusually spelled) bytes",
      );
      const other = raw.replace("_raw", "_raw2");
      const normalised = JSON.stringify(JSON.parse(other));
      const ex = await t.postEvent({ body: other, signature: { over: normalised } });
      t.expectRefused(ex, "an event signed over its re-serialised JSON instead of the bytes sent", {
        status: 401,
        code: "invalid_signature",
      });
    },
  },
  {
    id: "EVT-11",
    kind: "scenario",
    title: "An event without Idempotency-Key is refused",
    category: "events",
    level: "spec",
    cites: [HEADERS_REQUIRED, spec("§6", "Each event carries an `Idempotency-Key`.")],
    tolerates: [GAPS.statusCodes],
    reference: {
      asserts: "400 missing_idempotency_key",
      cites: [contract("§5", "`Idempotency-Key` present (`400 missing_idempotency_key`)")],
    },
    failure: "status",
    cost: 1,
    needs: SIGNED,
    async run(t: CheckContext) {
      const ex = await t.postEvent({ body: t.newEvent(), idempotencyKey: null });
      t.expectRefused(ex, "an event without Idempotency-Key", {
        status: 400,
        code: "missing_idempotency_key",
      });
    },
  },
  {
    id: "EVT-12",
    kind: "scenario",
    title: "An Idempotency-Key must be 1–255 visible ASCII characters",
    category: "events",
    level: "reference",
    cites: [contract("§5", "1–255 visible ASCII characters (`400 invalid_idempotency_key`)")],
    failure: "status",
    cost: 3,
    needs: SIGNED,
    async run(t: CheckContext) {
      const base = t.newIdempotencyKey();
      const long = await t.postEvent({ body: t.newEvent(), idempotencyKey: base.padEnd(256, "x") });
      t.expectRefused(long, "a 256-character Idempotency-Key", {
        status: 400,
        code: "invalid_idempotency_key",
      });
      const spaced = await t.postEvent({ body: t.newEvent(), idempotencyKey: `${base} with spaces` });
      t.expectRefused(spaced, "an Idempotency-Key with spaces", {
        status: 400,
        code: "invalid_idempotency_key",
      });
      const longest = await t.postEvent({
        body: t.newEvent(),
        idempotencyKey: `${base}-max`.padEnd(255, "y"),
      });
      expectNew(t, longest, "a 255-character Idempotency-Key");
    },
  },
  {
    id: "EVT-13",
    kind: "scenario",
    title: "Content-Type must be application/json",
    category: "events",
    level: "spec",
    cites: [HEADERS_REQUIRED, spec("§4.5", "| Content-Type | application/json |")],
    tolerates: [GAPS.statusCodes],
    reference: {
      asserts: "415 unsupported_media_type; charset=utf-8 accepted",
      cites: [
        contract(
          "§5",
          "`Content-Type` is `application/json`, optionally with `charset=utf-8` (`415 unsupported_media_type`)",
        ),
      ],
    },
    failure: "status",
    cost: 3,
    needs: SIGNED,
    async run(t: CheckContext) {
      const plain = await t.postEvent({ body: t.newEvent(), contentType: "text/plain" });
      t.expectRefused(plain, "an event sent as text/plain", { status: 415, code: "unsupported_media_type" });
      const none = await t.postEvent({ body: t.newEvent(), contentType: null });
      t.expectRefused(none, "an event without Content-Type", { status: 415, code: "unsupported_media_type" });
      if (t.reference) {
        const charset = await t.postEvent({
          body: t.newEvent(),
          contentType: "application/json; charset=utf-8",
        });
        expectNew(t, charset, "an event sent as application/json; charset=utf-8");
      }
    },
  },
  {
    id: "EVT-14",
    kind: "scenario",
    title: "A body that is not JSON is refused",
    category: "events",
    level: "spec",
    cites: [spec("§4.5", "Body (JSON):")],
    tolerates: [GAPS.statusCodes],
    reference: { asserts: "400 invalid_json", cites: [contract("§5", "JSON parses (`400 invalid_json`)")] },
    failure: "status",
    cost: 1,
    needs: SIGNED,
    async run(t: CheckContext) {
      const ex = await t.postEvent({
        body: '{"event_type": "partner.user.created", ',
        eventHeader: "partner.user.created",
      });
      t.expectRefused(ex, "a truncated JSON body", { status: 400, code: "invalid_json" });
    },
  },
  {
    id: "EVT-15",
    kind: "scenario",
    title: "An event that breaks the schema is refused",
    category: "events",
    level: "spec",
    cites: [
      spec(
        "§4.5",
        "| event_type | string enum | yes | `partner.user.created`, `partner.user.kyc_updated`, `partner.reconciliation.confirmed` |",
      ),
      spec("§4.5", "| occurred_at | string, date-time (ISO 8601) | yes | When the event occurred. |"),
      spec("§4.5", "| data | object | yes | Event payload. |"),
    ],
    tolerates: [GAPS.statusCodes],
    reference: {
      asserts:
        "400 invalid_event with JSON pointers; unknown fields, offset-less times and more than 9 fractional digits refused too",
      cites: [
        contract("§5", "schema (`400 invalid_event`, with the failing fields as JSON pointers)"),
        contract(
          "§5",
          "`occurred_at`: RFC 3339 date-time with an offset (`Z` or `±hh:mm`), fractional seconds of at\n  most 9 digits.",
        ),
        contract(
          "§5",
          "Unknown top-level fields are refused (`invalid_event`); the content of `data` is opaque.",
        ),
      ],
    },
    failure: "status",
    cost: 7,
    needs: SIGNED,
    async run(t: CheckContext) {
      const valid = t.newEvent();
      const { event_type: _t, ...noType } = valid;
      const { data: _d, ...noData } = valid;
      const cases: Array<[string, Record<string, unknown>, string, string, boolean]> = [
        ["event_type missing", noType, "partner.user.created", "/body/event_type", false],
        [
          "an unknown event_type",
          { ...valid, event_type: "partner.user.deleted" },
          "partner.user.deleted",
          "/body/event_type",
          false,
        ],
        [
          "occurred_at not a date-time",
          { ...valid, occurred_at: "yesterday" },
          "partner.user.created",
          "/body/occurred_at",
          false,
        ],
        ["data a string", { ...valid, data: "x" }, "partner.user.created", "/body/data", false],
        ["data missing", noData, "partner.user.created", "/body/data", false],
        ["an unknown top-level field", { ...valid, extra: 1 }, "partner.user.created", "/body/extra", true],
        [
          "occurred_at without an offset",
          { ...valid, occurred_at: "2026-11-20T10:15:00" },
          "partner.user.created",
          "/body/occurred_at",
          true,
        ],
        [
          "occurred_at with 10 fractional digits",
          { ...valid, occurred_at: "2026-11-20T10:15:00.1234567890Z" },
          "partner.user.created",
          "/body/occurred_at",
          true,
        ],
      ];
      for (const [what, body, header, pointer, referenceOnly] of cases) {
        if (referenceOnly && !t.reference) continue;
        const ex = await t.postEvent({ body, eventHeader: header });
        t.expectRefused(ex, `an event with ${what}`, { status: 400, code: "invalid_event" });
        withPointers(t, ex, pointer, `an event with ${what}`);
      }
    },
  },
  {
    id: "EVT-16",
    kind: "scenario",
    title: "X-Partner-Event is required and must equal event_type",
    category: "events",
    level: "spec",
    cites: [
      HEADERS_REQUIRED,
      spec("§4.5", "| X-Partner-Event | event type string (same set of values as `event_type`) |"),
    ],
    tolerates: [GAPS.statusCodes],
    reference: {
      asserts:
        "400 event_type_mismatch for a missing or different header (at level spec a different one need only not cause a 5xx)",
      cites: [
        contract("§5", "`X-Partner-Event` equals `event_type` (`400 event_type_mismatch`)"),
        decision(
          "Events (§5)",
          "A missing `X-Partner-Event` is `400 event_type_mismatch` (it cannot equal `event_type`).",
        ),
      ],
    },
    failure: "status",
    cost: 2,
    needs: SIGNED,
    async run(t: CheckContext) {
      const missing = await t.postEvent({ body: t.newEvent(), eventHeader: null });
      t.expectRefused(missing, "an event without X-Partner-Event", {
        status: 400,
        code: "event_type_mismatch",
      });
      const other = await t.postEvent({
        body: t.newEvent("partner.user.created"),
        eventHeader: "partner.user.kyc_updated",
      });
      if (t.reference) {
        t.expectRefused(other, "X-Partner-Event different from event_type", {
          status: 400,
          code: "event_type_mismatch",
        });
      } else {
        t.check(
          t.status(other) < 500,
          `X-Partner-Event different from event_type: server error ${t.status(other)}`,
          other,
        );
      }
    },
  },
  {
    id: "EVT-17",
    kind: "scenario",
    title: "A body over 64 KiB is refused",
    category: "events",
    level: "reference",
    cites: [
      contract(
        "§5",
        "body size (`413 payload_too_large`, default limit 64 KiB, checked against Content-Length before reading and while reading)",
      ),
    ],
    failure: "status",
    cost: 1,
    needs: SIGNED,
    async run(t: CheckContext) {
      const body = JSON.stringify(t.newEvent("partner.user.created", { pad: "x".repeat(65_536) }));
      const ex = await t.postEvent({ body });
      t.expectRefused(ex, `a ${encoder.encode(body).length}-byte event`, {
        status: 413,
        code: "payload_too_large",
      });
    },
  },
  {
    id: "EVT-18",
    kind: "scenario",
    title: "A refused request leaves no record: its key can be used again",
    category: "events",
    level: "reference",
    cites: [
      contract(
        "§5",
        "requests refused by any check before idempotency leave no record: the partner can fix and resend with the same key.",
      ),
    ],
    failure: "state",
    cost: 3,
    needs: SIGNED,
    async run(t: CheckContext) {
      const key = t.newIdempotencyKey();
      const invalid = await t.postEvent({
        body: { ...t.newEvent(), occurred_at: "yesterday" },
        idempotencyKey: key,
      });
      t.expectRefused(invalid, "an invalid event", { status: 400, code: "invalid_event" });
      const unsigned = await t.postEvent({
        body: t.newEvent(),
        idempotencyKey: key,
        signature: { literal: "0".repeat(64) },
      });
      t.expectRefused(unsigned, "a badly signed event", { status: 401, code: "invalid_signature" });
      const ok = await t.postEvent({ body: t.newEvent(), idempotencyKey: key });
      const status = t.status(ok);
      if (status !== 200)
        t.fail(
          `the corrected event under the same key: expected 200, got ${status}${codeOf(ok)}: a refused request left a record`,
          invalid,
          unsigned,
          ok,
        );
      const ack = expectAck(t, ok, "the corrected event under the same key");
      t.check(
        !ack.duplicate,
        'the corrected event should be new ("duplicate": false): the refused requests left a record',
        invalid,
        unsigned,
        ok,
      );
    },
  },
  {
    id: "EVT-19",
    kind: "scenario",
    title: "Identical events sent at once yield exactly one event",
    category: "events",
    level: "reference",
    cites: [
      contract("§5", "Under any concurrency, one key yields exactly one event."),
      contract(
        "§5",
        "same key while the first is still being stored → `409 idempotency_in_progress` with `Retry-After: 1`",
      ),
    ],
    failure: "state",
    cost: (o) => o.concurrentDuplicates,
    needs: SIGNED,
    async run(t: CheckContext) {
      const key = t.newIdempotencyKey();
      const body = JSON.stringify(t.newEvent());
      const spec = t.eventRequest({ body, idempotencyKey: key });
      const exchanges = await t.concurrently(
        Array.from({ length: t.inputs.plan.concurrentDuplicates }, () => spec),
      );
      const acks: Ack[] = [];
      for (const ex of exchanges) {
        const status = t.status(ex);
        if (status === 409) {
          t.expectRefused(ex, "a concurrent duplicate", { status: 409, code: "idempotency_in_progress" });
          t.check(
            t.header(ex, "retry-after") === "1",
            "409 idempotency_in_progress should carry Retry-After: 1",
            ex,
          );
          continue;
        }
        acks.push(expectAck(t, ex, "a concurrent duplicate"));
      }
      const fresh = acks.filter((a) => !a.duplicate);
      const ids = [...new Set(acks.map((a) => a.eventId))];
      const refused = exchanges.length - acks.length;
      const answers =
        `${exchanges.length} identical requests at once: ${acks.length} answered 200` +
        (refused > 0 ? `, ${refused} 409 idempotency_in_progress` : "");
      t.check(
        ids.length === 1,
        `${answers}, with ${ids.length} different "event_id"s (${ids.join(", ")}): ${ids.length} events stored, want exactly 1`,
        ...exchanges,
      );
      t.check(
        fresh.length === 1,
        `${answers}, all with one "event_id" (${ids[0]}): one event, as required; but ${fresh.length} of them ` +
          `answered "duplicate": false (want exactly 1: the request that stored it; every other "duplicate": true)`,
        ...exchanges,
      );
    },
  },
  {
    id: "EVT-20",
    kind: "scenario",
    title: "Every event type is accepted, with increasing event_ids",
    category: "events",
    level: "spec",
    cites: [ACCEPTED, spec("§6", "| partner.reconciliation.confirmed | A reconciliation was confirmed. |")],
    tolerates: [GAPS.eventData],
    reference: { asserts: "each new event_id greater than the previous one", cites: [EVENT_ID] },
    failure: "status",
    cost: 3,
    needs: SIGNED,
    async run(t: CheckContext) {
      const acks: Array<[Ack, Exchange]> = [];
      for (const type of EVENT_TYPES) {
        const ex = await t.postEvent({ body: t.newEvent(type) });
        acks.push([expectNew(t, ex, `a ${type} event`), ex]);
      }
      if (t.reference) {
        for (let i = 1; i < acks.length; i++) {
          const [[a, exA], [b, exB]] = [acks[i - 1]!, acks[i]!];
          t.check(
            b.eventId > a.eventId,
            `event_ids should increase in acceptance order: ${a.eventId} then ${b.eventId}`,
            exA,
            exB,
          );
        }
      }
    },
  },
  {
    id: "EVT-21",
    kind: "scenario",
    title: "Events are checked in the contract's order: size, type, signature, key, JSON",
    category: "events",
    level: "reference",
    cites: [
      contract(
        "§5",
        "Order of checks, first failure wins: authentication (401) → rate limit (429) → body size",
      ),
    ],
    failure: "status",
    cost: 5,
    needs: SIGNED,
    async run(t: CheckContext) {
      // Each request breaks two rules; the earlier one in CONTRACT §5 must win.
      const big = JSON.stringify(t.newEvent("partner.user.created", { pad: "x".repeat(65_536) }));
      const notJson = `{"event_type": "partner.user.created", "occurred_at": `;
      const cases: Array<[string, EventRequest, number, string]> = [
        [
          "an oversized body with Content-Type text/plain",
          { body: big, contentType: "text/plain" },
          413,
          "payload_too_large",
        ],
        [
          "Content-Type text/plain and no signature",
          { body: t.newEvent(), contentType: "text/plain", signature: "none" },
          415,
          "unsupported_media_type",
        ],
        [
          "a wrong signature and no Idempotency-Key",
          { body: t.newEvent(), signature: { literal: "0".repeat(64) }, idempotencyKey: null },
          401,
          "invalid_signature",
        ],
        [
          "no Idempotency-Key and a body that is not JSON",
          { body: notJson, idempotencyKey: null, eventHeader: "partner.user.created" },
          400,
          "missing_idempotency_key",
        ],
        [
          "a body that is not JSON and a mismatching X-Partner-Event",
          { body: notJson, eventHeader: "partner.reconciliation.confirmed" },
          400,
          "invalid_json",
        ],
      ];
      for (const [what, request, status, code] of cases) {
        const ex = await t.postEvent(request);
        t.expectRefused(ex, what, { status, code });
      }
    },
  },
  {
    id: "EVT-22",
    kind: "scenario",
    title: "A chunked body over 64 KiB is refused with 413 before it is all read",
    category: "events",
    level: "reference",
    cites: [contract("§5", "checked against Content-Length before reading and while reading)")],
    failure: "status",
    // A second try when the first could read no status (the answer lost to a reset).
    cost: 2,
    needs: SIGNED,
    async run(t: CheckContext) {
      const first = await streamOversized(t);
      let ex = first;
      if (first.response === undefined) {
        // The target closed while the body was still being sent, before its status could be
        // read: an EPIPE or reset is how a refusal while reading may end, but it says nothing
        // by itself. The status read decides; once more, to read it.
        t.note(`first try: no status could be read (${first.error ?? "no response"}); tried once more`);
        ex = await streamOversized(t);
        if (ex.response === undefined)
          t.warning(
            `no status could be read in two tries: the connection closed while the body was still being sent ` +
              `(${first.error ?? "no response"}; then ${ex.error ?? "no response"}). ` +
              "A refusal while reading may end so, but its 413 was not read: the target likely closed the " +
              "connection at once after answering, and the reset discarded the answer before it was read. " +
              "A server should keep reading (or linger) briefly after an early 413 so the client reads it",
            first,
            ex,
          );
      }
      t.expectRefused(ex, `a chunked body of up to ${STREAM_BYTES} bytes`, {
        status: 413,
        code: "payload_too_large",
      });
      if (ex.stream === undefined || ex.stream.finishedBeforeAnswer) {
        // The body was refused, only late: a reverse proxy that buffers request bodies (nginx's
        // default, proxy_request_buffering on) holds it all before the server sees a byte. A
        // finding about the topology, not a broken contract.
        t.warning(
          `the 413 came only after all ${ex.stream?.bytes ?? 0} bytes were sent: the body was refused, but not while it was read. ` +
            "Likely cause: a reverse proxy in front that buffers request bodies (nginx: proxy_request_buffering on); " +
            "otherwise the server reads the whole body before checking its size",
          ex,
        );
      }
    },
  },
];
