/**
 * The OpenAPI document: valid OpenAPI 3.1 (a real validator), generated from the zod schemas,
 * committed without drift, served by the API, and complete against the contract.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import {
  buildOpenApiDocument,
  ERRORS,
  type ErrorCode,
  PartnerEvent,
  Problem,
  Product,
} from "@partner-yield/core";
import { startTestServer } from "@partner-yield/node-adapter/testing";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Client } from "undici";
import { DEFAULT_OPENAPI_PATH, openApiJson } from "../src/index.js";

type Json = Record<string, any>;
const doc = buildOpenApiDocument() as Json;

/** The contract's operations and the error codes each can answer with (CONTRACT §3–§7). */
const AUTH: ErrorCode[] = [
  "missing_api_key",
  "invalid_api_key",
  "wrong_environment",
  "rate_limited",
  "service_unavailable",
  "internal_error",
];
const CONTRACT: { path: string; method: string; params: string[]; errors: ErrorCode[] }[] = [
  { path: "/api/partner/products", method: "get", params: [], errors: AUTH },
  {
    path: "/api/partner/products/{slug}",
    method: "get",
    params: ["path:slug"],
    errors: [...AUTH, "product_not_found"],
  },
  {
    path: "/api/partner/products/{slug}/position",
    method: "get",
    params: ["path:slug", "query:address"],
    errors: [...AUTH, "product_not_found", "invalid_address", "invalid_parameter"],
  },
  {
    path: "/api/partner/products/{slug}/yield-calc",
    method: "get",
    params: ["path:slug", "query:amount"],
    errors: [
      ...AUTH,
      "product_not_found",
      "invalid_amount",
      "invalid_parameter",
      "product_not_active",
      "metrics_unavailable",
    ],
  },
  {
    path: "/api/partner/webhooks/inbound",
    method: "post",
    params: [
      "header:X-Partner-Event",
      "header:X-Partner-Signature",
      "header:Idempotency-Key",
      "header:Content-Type",
    ],
    errors: [
      ...AUTH,
      "payload_too_large",
      "unsupported_media_type",
      "invalid_signature",
      "missing_idempotency_key",
      "invalid_idempotency_key",
      "invalid_json",
      "invalid_event",
      "event_type_mismatch",
      "invalid_body",
      "idempotency_key_reused",
      "idempotency_in_progress",
      "event_store_full",
    ],
  },
  { path: "/api/partner/openapi.json", method: "get", params: [], errors: [] },
];

function resolve(node: Json): Json {
  if (typeof node.$ref !== "string") return node;
  const parts = (node.$ref as string).slice(2).split("/");
  return resolve(parts.reduce((at: Json, key) => at[key], doc));
}

describe("OpenAPI document", () => {
  test("is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, "3.1");
  });

  test("docs/openapi.json is what the schemas generate (run `pnpm openapi` after a change)", () => {
    const committed = readFileSync(DEFAULT_OPENAPI_PATH, "utf8");
    assert.equal(
      committed,
      openApiJson(),
      "docs/openapi.json drifted from the zod schemas: run `pnpm openapi`",
    );
  });

  test("components are the zod schemas, not a second description", () => {
    const schemas = doc.components.schemas as Json;
    assert.deepEqual(Object.keys(schemas.Product.properties), Object.keys(Product.shape));
    assert.deepEqual(schemas.Product.required, Object.keys(Product.shape));
    assert.deepEqual(Object.keys(schemas.PartnerEvent.properties), Object.keys(PartnerEvent.shape));
    assert.equal(schemas.PartnerEvent.additionalProperties, false);
    assert.deepEqual(schemas.Problem.properties.code.enum, Object.keys(ERRORS));
    assert.deepEqual(Object.keys(schemas.Problem.properties), Object.keys(Problem.shape));
    assert.deepEqual(schemas.EventType.enum, [
      "partner.user.created",
      "partner.user.kyc_updated",
      "partner.reconciliation.confirmed",
    ]);
  });

  test("every endpoint, parameter and error code of the contract, and nothing else", () => {
    const documented = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m} ${path}`),
    );
    assert.deepEqual(documented.sort(), CONTRACT.map((op) => `${op.method} ${op.path}`).sort());
    for (const op of CONTRACT) {
      const operation = doc.paths[op.path][op.method] as Json;
      const params = ((operation.parameters ?? []) as Json[]).map(resolve).map((p) => `${p.in}:${p.name}`);
      assert.deepEqual(params.sort(), [...op.params].sort(), `${op.path} parameters`);
      for (const p of (operation.parameters ?? []) as Json[]) assert.equal(resolve(p).required, true);
      const codes: string[] = [];
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        if (status === "200") continue;
        const schema = response.content["application/problem+json"].schema;
        const listed = schema.allOf[1].properties.code.enum as ErrorCode[];
        for (const code of listed)
          assert.equal(String(ERRORS[code].status), status, `${code} under ${status}`);
        codes.push(...listed);
      }
      assert.deepEqual(codes.sort(), [...op.errors].sort(), `${op.method} ${op.path} error codes`);
    }
    assert.deepEqual(Object.keys(doc.components.responses).sort(), [
      "HeadersTooLarge",
      "MethodNotAllowed",
      "NotFound",
      "RequestTimeout",
    ]);
  });

  test("every error code of the core's table is documented, under its own status", () => {
    const documented = new Set<string>();
    const collect = (response: Json, status: string) => {
      for (const code of response.content["application/problem+json"].schema.allOf[1].properties.code.enum) {
        assert.equal(String(ERRORS[code as ErrorCode].status), status, code);
        documented.add(code);
      }
    };
    for (const item of Object.values(doc.paths as Json)) {
      for (const operation of Object.values(item as Json)) {
        for (const [status, response] of Object.entries(operation.responses as Json))
          if (status !== "200") collect(response, status);
      }
    }
    collect(doc.components.responses.NotFound, "404");
    collect(doc.components.responses.MethodNotAllowed, "405");
    collect(doc.components.responses.RequestTimeout, "408");
    collect(doc.components.responses.HeadersTooLarge, "431");
    assert.deepEqual([...documented].sort(), Object.keys(ERRORS).sort());
  });

  test("security: X-Api-Key everywhere but the document itself", () => {
    assert.deepEqual(doc.components.securitySchemes.ApiKey, {
      ...doc.components.securitySchemes.ApiKey,
      type: "apiKey",
      in: "header",
      name: "X-Api-Key",
    });
    assert.deepEqual(doc.security, [{ ApiKey: [] }]);
    assert.deepEqual(doc.paths["/api/partner/openapi.json"].get.security, []);
  });

  test("response headers: X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, Idempotent-Replayed", () => {
    for (const op of CONTRACT) {
      const responses = doc.paths[op.path][op.method].responses as Json;
      for (const response of Object.values(responses)) assert.ok(response.headers["X-Request-Id"], op.path);
      if (op.errors.length === 0) continue;
      assert.equal(resolve(responses["200"].headers.RateLimit).required, true);
      assert.equal(resolve(responses["200"].headers["RateLimit-Policy"]).required, true);
      assert.equal(resolve(responses["429"].headers["Retry-After"]).required, true);
      assert.equal(resolve(responses["503"].headers["Retry-After"]).required, true);
      assert.equal(
        responses["401"].headers.RateLimit === undefined,
        op.method === "get",
        "401: RateLimit only after authentication",
      );
    }
    const inbound = doc.paths["/api/partner/webhooks/inbound"].post.responses as Json;
    assert.ok(inbound["200"].headers["Idempotent-Replayed"]);
    assert.ok(inbound["409"].headers["Retry-After"]);
    assert.deepEqual(
      doc.paths["/api/partner/webhooks/inbound"].post.requestBody.content["application/json"].schema,
      {
        $ref: "#/components/schemas/PartnerEvent",
      },
    );
    assert.ok(doc.components.responses.MethodNotAllowed.headers.Allow);
  });

  test("the server serves the same document at /api/partner/openapi.json without a key", async () => {
    const server = await startTestServer();
    const client = new Client(server.url);
    try {
      const res = await client.request({ method: "GET", path: "/api/partner/openapi.json" });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await res.body.json(), doc);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
