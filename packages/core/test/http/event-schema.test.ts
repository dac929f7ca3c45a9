/**
 * The schema step's plain check (`acceptedBySchema`) against the zod schema it stands in for
 * (`PartnerEvent`, which still names what fails): the two must agree on every body `JSON.parse`
 * can make, or an event would be judged by two rules.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ApiError } from "../../src/http/errors.js";
import { acceptedBySchema, validateEvent } from "../../src/http/inbound-event/event-schema.js";
import { EVENT_TYPES, PartnerEvent } from "../../src/http/schemas.js";
import { fcParams } from "../fc-config.js";

const VALID = { event_type: "partner.user.created", occurred_at: "2026-11-20T10:15:00Z", data: { a: 1 } };

type Member = "event_type" | "occurred_at" | "data";

/** Values of a member, right and wrong, as JSON texts. */
const member = {
  event_type: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...EVENT_TYPES).map((t) => JSON.stringify(t)) },
    fc.constantFrom(
      '"partner.user"',
      '"Partner.user.created"',
      '""',
      "null",
      "1",
      "[]",
      "{}",
      '"partner.user.created "',
    ),
  ),
  occurred_at: fc.oneof(
    { weight: 2, arbitrary: fc.date({ noInvalidDate: true }).map((d) => JSON.stringify(d.toISOString())) },
    fc.constantFrom(
      '"2026-11-20T10:15:00Z"',
      '"2024-02-29t23:59:60+01:00"',
      '"2026-02-29T10:15:00Z"',
      '"2026-11-20T10:15:00"',
      '"2026-11-20 10:15:00Z"',
      '"2026-11-20T10:15:00.123456789-23:59"',
      "null",
      "1763633700",
      "{}",
    ),
  ),
  data: fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }))
        .map((v) => JSON.stringify(v)),
    },
    fc.constantFrom(
      "{}",
      '{"__proto__":{"x":1}}',
      '{"constructor":1}',
      "[]",
      "[{}]",
      "null",
      '"x"',
      "0",
      "true",
    ),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  ),
};
const extraKey = fc.constantFrom("__proto__", "constructor", "toString", "Event_type", "extra", "");

/** A body: the three members each present or not, in any order, perhaps with one more. */
const body = fc
  .record({
    members: fc.oneof(
      { weight: 3, arbitrary: fc.constant<Member[]>(["event_type", "occurred_at", "data"]) },
      fc.subarray<Member>(["event_type", "occurred_at", "data"]),
    ),
    event_type: member.event_type,
    occurred_at: member.occurred_at,
    data: member.data,
    extra: fc.option(fc.tuple(extraKey, fc.constantFrom("1", "null", "{}")), { nil: undefined, freq: 3 }),
    shuffle: fc.boolean(),
  })
  .map((b) => {
    const pairs = b.members.map((name) => `${JSON.stringify(name)}:${b[name]}`);
    if (b.extra !== undefined) pairs.push(`${JSON.stringify(b.extra[0])}:${b.extra[1]}`);
    if (b.shuffle) pairs.reverse();
    return `{${pairs.join(",")}}`;
  });
const notAnObject = fc.constantFrom("[]", "null", '"event"', "1", "true", `[${JSON.stringify(VALID)}]`);

describe("the plain schema check (CONTRACT §5 PartnerEvent)", () => {
  test("property: accepts exactly what the zod schema accepts, for any parsed body", () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 9, arbitrary: body }, { weight: 1, arbitrary: notAnObject }), (text) => {
        const value = JSON.parse(text) as unknown;
        const zod = PartnerEvent.safeParse(value).success;
        assert.equal(acceptedBySchema(value), zod, text);
        if (zod) accepted++;
        else refused++;
      }),
      { ...fcParams(), numRuns: Math.max(fcParams().numRuns ?? 200, 1000) },
    );
    assert.ok(
      accepted > 20 && refused > 20,
      `both answers were seen (${accepted} accepted, ${refused} refused)`,
    );
  });

  test("an accepted body gives its members as parsed; a refused one is named by zod", () => {
    const text =
      '{"data":{"__proto__":{"x":1},"b":[1]},"occurred_at":"2026-11-20T10:15:00+01:00","event_type":"partner.user.kyc_updated"}';
    const event = validateEvent({ text, value: JSON.parse(text) });
    assert.equal(event.eventType, "partner.user.kyc_updated");
    assert.equal(event.occurredAt, "2026-11-20T10:15:00+01:00");
    assert.deepEqual(Object.keys(event.data), ["__proto__", "b"]);
    assert.equal(
      event.canonical,
      '{"data":{"__proto__":{"x":1},"b":[1]},"event_type":"partner.user.kyc_updated","occurred_at":"2026-11-20T10:15:00+01:00"}',
    );

    const refused =
      '{"event_type":"partner.user.created","occurred_at":"2026-02-29T10:15:00Z","data":[],"x":1}';
    assert.throws(
      () => validateEvent({ text: refused, value: JSON.parse(refused) }),
      (error: unknown) => {
        assert.ok(error instanceof ApiError);
        assert.equal(error.code, "invalid_event");
        assert.deepEqual(
          error.errors?.map((e) => e.pointer),
          ["/body/occurred_at", "/body/data", "/body/x"],
        );
        return true;
      },
    );
  });
});
