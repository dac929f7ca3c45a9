/**
 * The steps of an inbound event (src/http/inbound-event/) on their own, where the API suite cannot
 * reach as precisely: the Content-Type the OpenAPI document publishes is exactly what the code
 * accepts, and what canonical JSON cannot fingerprint is reported as what it is.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ApiError } from "../../src/http/errors.js";
import { JSON_CONTENT_TYPE, JSON_CONTENT_TYPE_PATTERN } from "../../src/http/inbound-event/content-type.js";
import { validateEvent } from "../../src/http/inbound-event/event-schema.js";
import { buildOpenApiDocument } from "../../src/index.js";
import { fcParams } from "../../src/testing/index.js";

describe("Content-Type (CONTRACT §5, docs/contract.md)", () => {
  const published = new RegExp(JSON_CONTENT_TYPE_PATTERN); // no flags: as JSON Schema reads it

  test("accepts application/json with an optional utf-8 charset, any case, quoted or not", () => {
    const accepted = [
      "application/json",
      "Application/JSON",
      "application/json; charset=utf-8",
      'application/json;charset="UTF-8"',
      "application/json \t; \tcharset = utf-8 ",
      "  application/json  ",
    ];
    for (const value of accepted) {
      assert.ok(JSON_CONTENT_TYPE.test(value), value);
      assert.ok(published.test(value), value);
    }
    const refused = [
      "",
      "text/plain",
      "application/json; charset=latin1",
      "application/json; boundary=x",
      "application/jsonx",
      "application/json;",
      "application/json; charset=utf-8; x=y",
      "application/json\u00a0; charset=utf-8",
    ];
    for (const value of refused) {
      assert.ok(!JSON_CONTENT_TYPE.test(value), value);
      assert.ok(!published.test(value), value);
    }
  });

  test("the document publishes the code's pattern", () => {
    const doc = buildOpenApiDocument() as { components: { parameters: Record<string, { schema: unknown }> } };
    assert.deepEqual(
      (doc.components.parameters["Content-Type"]!.schema as { pattern: string }).pattern,
      JSON_CONTENT_TYPE_PATTERN,
    );
  });

  test("property: the published pattern and the code agree on every variant", () => {
    const caseOf = (text: string, flips: boolean[]) =>
      [...text].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c)).join("");
    const space = fc.constantFrom("", " ", "\t", "  ", "\u00a0", "\n");
    const variant = fc
      .tuple(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        space,
        space,
        space,
        space,
        fc.constantFrom("", "charset", "charset=utf-8", 'charset="utf-8"', "charset=utf8", "q=1"),
        fc.constantFrom("application/json", "application/jsn", "text/json"),
      )
      .map(([flips, a, b, c, d, parameter, type]) =>
        caseOf(`${a}${type}${b}${parameter === "" ? "" : `;${c}${parameter}`}${d}`, flips),
      );
    fc.assert(
      fc.property(fc.oneof(variant, fc.string({ maxLength: 40 })), (value) => {
        assert.equal(published.test(value), JSON_CONTENT_TYPE.test(value), JSON.stringify(value));
      }),
      fcParams(process.env),
    );
  });
});

describe("event schema: what cannot be fingerprinted is named", () => {
  const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });
  const event = (data: unknown) => ({
    text: "",
    value: { event_type: "partner.user.created", occurred_at: "2026-11-20T10:15:00Z", data },
  });

  test("nesting deeper than 64 levels is invalid_event at /body/data, saying so", () => {
    assert.doesNotThrow(() => validateEvent(event(nested(62))));
    try {
      validateEvent(event(nested(70)));
      assert.fail("accepted");
    } catch (error) {
      assert.ok(error instanceof ApiError);
      assert.equal(error.code, "invalid_event");
      assert.match(error.detail, /deeper than 64 levels/);
      assert.deepEqual(
        error.errors?.map((e) => e.pointer),
        ["/body/data"],
      );
    }
  });
});
