/**
 * JSON Schema for the OpenAPI document, from zod: the components reachable from the API's roots,
 * and a schema by `$ref` where it has an id.
 * @module
 */
import { z } from "zod";
import type { ParameterSpec } from "./parameters.js";
import {
  EventAck,
  EventType,
  PartnerEvent,
  PositionResponse,
  Problem,
  ProductListResponse,
  ProductResponse,
  YieldCalculationResponse,
} from "./schemas.js";

type Json = Record<string, unknown>;

const REF = "#/components/schemas/";

/** Strips what a standalone JSON Schema carries but an embedded one must not. */
function embedded(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

function jsonSchema(schema: z.ZodType): Json {
  return embedded(z.toJSONSchema(schema, { target: "draft-2020-12" }) as Json);
}

/** A component schema by reference when it has an id, else inline. */
export function schemaOf(schema: z.ZodType | Readonly<Record<string, unknown>>): Json {
  if (!(schema instanceof z.ZodType)) return { ...schema };
  const id = z.globalRegistry.get(schema)?.id;
  return id === undefined ? jsonSchema(schema) : { $ref: REF + id };
}

export function parameterComponent(spec: ParameterSpec): Json {
  const out: Json = { name: spec.name, in: spec.in, required: spec.required };
  if (spec.description !== undefined) out["description"] = spec.description;
  out["schema"] = schemaOf(spec.schema);
  return out;
}

/**
 * The component schemas: every schema with a `.meta({ id })` reachable from the API's roots, as
 * zod generates them. Taken from the global registry (which holds the descriptions too) and cut
 * to what the roots reference, so schemas other modules register never leak in.
 */
export function componentSchemas(): Json {
  const generated = z.toJSONSchema(z.globalRegistry, {
    target: "draft-2020-12",
    uri: (id) => REF + id,
  }).schemas as Record<string, Json>;
  const roots = [
    ProductListResponse,
    ProductResponse,
    PositionResponse,
    YieldCalculationResponse,
    PartnerEvent,
    EventAck,
    Problem,
    EventType,
  ];
  const wanted = new Set<string>();
  const visit = (id: string) => {
    if (wanted.has(id)) return;
    const schema = generated[id];
    if (schema === undefined) throw new Error(`OpenAPI: component ${id} was not generated`);
    wanted.add(id);
    for (const ref of JSON.stringify(schema).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g))
      visit(ref[1]!);
  };
  for (const root of roots) {
    const id = z.globalRegistry.get(root)?.id;
    if (id === undefined) throw new Error("OpenAPI: a root schema has no .meta({ id })");
    visit(id);
  }
  const out: Json = {};
  for (const id of [...wanted].sort()) out[id] = embedded(generated[id]!);
  return out;
}
