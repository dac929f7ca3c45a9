/**
 * The schema step of `validateEvent` against the zod schema (`PartnerEvent`): the event route
 * must judge a body by that schema and nothing else at this step, on every body `JSON.parse` can
 * make. Each kind of body is generated on its own (accepted ones, and refused ones of each kind),
 * so every run checks both answers whatever its seed; the mixed generator adds bodies of several
 * faults at once. (A body the schema accepts may still be refused by a later step: too deep to
 * fingerprint, an inexact number; those are not schema refusals.)
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ApiError } from "../../src/http/errors.js";
import { validateEvent } from "../../src/http/inbound-event/event-schema.js";
import { EVENT_TYPES, PartnerEvent } from "../../src/http/schemas.js";
import { fcParams } from "../../src/testing/index.js";

const VALID = { event_type: "partner.user.created", occurred_at: "2026-11-20T10:15:00Z", data: { a: 1 } };
const MEMBERS = ["event_type", "occurred_at", "data"] as const;

type Member = (typeof MEMBERS)[number];
type Members = Record<Member, string>;

const pad2 = (n: number) => String(n).padStart(2, "0");
const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });

/** RFC 3339 date-times §5 accepts: years 0000-9999, `T`/`t`, any fraction, `Z`/`z` or ±hh:mm, a leap second. */
const dateTime = fc
  .record({
    date: fc.date({
      min: new Date("0000-01-01T00:00:00.000Z"),
      max: new Date("9999-12-31T23:59:59.999Z"),
      noInvalidDate: true,
    }),
    t: fc.constantFrom("T", "t"),
    fraction: fc.option(digits(1, 9), { nil: undefined }),
    leapSecond: fc.boolean(),
    offset: fc.oneof(
      fc.constantFrom("Z", "z"),
      fc
        .tuple(fc.constantFrom("+", "-"), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([sign, h, m]) => `${sign}${pad2(h)}:${pad2(m)}`),
    ),
  })
  .map(({ date, t, fraction, leapSecond, offset }) => {
    const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
    let time = iso.slice(11, 19);
    if (leapSecond && time.slice(3, 5) === "59") time = `${time.slice(0, 6)}60`;
    return `${iso.slice(0, 10)}${t}${time}${fraction === undefined ? "" : `.${fraction}`}${offset}`;
  });

/** Values of each member the schema accepts, as JSON texts. */
const right: { readonly [M in Member]: fc.Arbitrary<string> } = {
  event_type: fc.constantFrom(...EVENT_TYPES).map((t) => JSON.stringify(t)),
  occurred_at: fc.oneof(
    dateTime.map((d) => JSON.stringify(d)),
    fc.constantFrom(
      '"2026-11-20T10:15:00Z"',
      '"2024-02-29t23:59:60+01:00"',
      '"2026-11-20T10:15:00.123456789-23:59"',
    ),
  ),
  data: fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }))
        .map((v) => JSON.stringify(v)),
    },
    fc.constantFrom("{}", '{"__proto__":{"x":1}}', '{"constructor":1}'),
  ),
};

/** Values of each member the schema refuses, as JSON texts. */
const wrong: { readonly [M in Member]: fc.Arbitrary<string> } = {
  event_type: fc.oneof(
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
    fc
      .string({ maxLength: 30 })
      .filter((s) => !(EVENT_TYPES as readonly string[]).includes(s))
      .map((s) => JSON.stringify(s)),
  ),
  occurred_at: fc.oneof(
    fc.constantFrom(
      '"2026-02-29T10:15:00Z"',
      '"2026-04-31T10:15:00Z"',
      '"2026-11-20T24:00:00Z"',
      '"2026-11-20T10:15:60Z"',
      '"2026-11-20T10:15:00+24:00"',
      '"2026-11-20T10:15:00"',
      '"2026-11-20 10:15:00Z"',
      '"26-11-20T10:15:00Z"',
      `"2026-11-20T10:15:00.${"1".repeat(60)}Z"`,
      "null",
      "1763633700",
      "{}",
    ),
    // A right date-time without its offset, or with a space for its `T`.
    dateTime.map((d) => JSON.stringify(d.replace(/([Zz]|[+-][0-9]{2}:[0-9]{2})$/, ""))),
    dateTime.map((d) => JSON.stringify(d.replace(/[Tt]/, " "))),
  ),
  data: fc.oneof(
    fc.constantFrom("[]", "[{}]", "null", '"x"', "0", "true"),
    fc
      .oneof(
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
        fc.string(),
        fc.integer(),
        fc.boolean(),
      )
      .map((v) => JSON.stringify(v)),
  ),
};
const extraKey = fc.constantFrom("__proto__", "constructor", "toString", "Event_type", "extra", "");
const extraValue = fc.constantFrom("1", "null", "{}");

/** An object's text from its members' names and JSON texts, in the order given. */
function objectText(pairs: readonly (readonly [string, string])[]): string {
  return `{${pairs.map(([name, text]) => `${JSON.stringify(name)}:${text}`).join(",")}}`;
}

/** The members in any order, perhaps only some of them (`minLength`, `maxLength`). */
function inAnyOrder(
  members: Members,
  extra: readonly (readonly [string, string])[] = [],
  lengths: { minLength?: number; maxLength?: number } = {},
): fc.Arbitrary<string> {
  const pairs: (readonly [string, string])[] = [...MEMBERS.map((m) => [m, members[m]] as const), ...extra];
  return fc
    .shuffledSubarray(pairs, { minLength: lengths.minLength ?? pairs.length, ...lengths })
    .map(objectText);
}

/** The three members' values, each from `pick`. */
const members = (pick: (m: Member) => fc.Arbitrary<string>) =>
  fc.record({ event_type: pick("event_type"), occurred_at: pick("occurred_at"), data: pick("data") });

/** Bodies of the three members in any order, each right but `faulty` (if given), which is wrong. */
const threeMembers = (faulty?: Member) =>
  members((m) => (m === faulty ? wrong[m] : right[m])).chain((m) => inAnyOrder(m));

/** Bodies the schema accepts: the three members, each right, in any order. */
const acceptedBody = threeMembers();

/** Bodies the schema refuses, one kind of fault each. */
const refusedBodies: Readonly<Record<string, fc.Arbitrary<string>>> = {
  "a body with a wrong event_type": threeMembers("event_type"),
  "a body with a wrong occurred_at": threeMembers("occurred_at"),
  "a body whose data is not an object": threeMembers("data"),
  "a body missing a member": members((m) => right[m]).chain((m) =>
    inAnyOrder(m, [], { minLength: 0, maxLength: 2 }),
  ),
  "a body with one member too many": fc
    .tuple(
      members((m) => right[m]),
      extraKey,
      extraValue,
    )
    .chain(([m, key, value]) => inAnyOrder(m, [[key, value]])),
  "a value that is not an object": fc.constantFrom(
    "[]",
    "null",
    '"event"',
    "1",
    "true",
    `[${JSON.stringify(VALID)}]`,
  ),
};

/** Any body: each member right or wrong, present or not, in any order, perhaps with one more. */
const mixedBody = fc.oneof(
  {
    weight: 9,
    arbitrary: fc
      .record({
        members: members((m) => fc.oneof({ weight: 3, arbitrary: right[m] }, wrong[m])),
        extra: fc.option(fc.tuple(extraKey, extraValue), { nil: undefined, freq: 3 }),
        some: fc.boolean(),
      })
      .chain(({ members: m, extra, some }) =>
        inAnyOrder(m, extra === undefined ? [] : [extra], some ? { minLength: 0 } : {}),
      ),
  },
  { weight: 1, arbitrary: refusedBodies["a value that is not an object"]! },
);

/** Whether `validateEvent`'s schema step accepts a body (a later step may still refuse it). */
function passesSchemaStep(text: string, value: unknown): boolean {
  try {
    validateEvent({ text, value });
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.message.endsWith("the event does not match the schema"))
      return false;
    return true;
  }
}

/** Both answers for a body text: the event route's schema step, and zod's. */
function answers(text: string): { plain: boolean; zod: boolean } {
  const value = JSON.parse(text) as unknown;
  return { plain: passesSchemaStep(text, value), zod: PartnerEvent.safeParse(value).success };
}

const runs = () => ({
  ...fcParams(process.env),
  numRuns: Math.max(fcParams(process.env).numRuns ?? 200, 1000),
});

describe("the schema step of an event (CONTRACT §5 PartnerEvent)", () => {
  test("property: accepts exactly what the zod schema accepts, for any parsed body", () => {
    fc.assert(
      fc.property(mixedBody, (text) => {
        const { plain, zod } = answers(text);
        assert.equal(plain, zod, text);
      }),
      runs(),
    );
  });

  test("property: both accept a body of the three right members, in any order", () => {
    fc.assert(
      fc.property(acceptedBody, (text) => {
        assert.deepEqual(answers(text), { plain: true, zod: true }, text);
      }),
      fcParams(process.env),
    );
  });

  for (const [kind, refusedBody] of Object.entries(refusedBodies)) {
    test(`property: both refuse ${kind}`, () => {
      fc.assert(
        fc.property(refusedBody, (text) => {
          assert.deepEqual(answers(text), { plain: false, zod: false }, text);
        }),
        fcParams(process.env),
      );
    });
  }

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
