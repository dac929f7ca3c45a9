/** Placeholder: replaced by the OpenAPI 3.1 generator (node-adapter issue). */
export function buildOpenApiDocument(): Record<string, unknown> {
  return { openapi: "3.1.0", info: { title: "partner-yield", version: "0.1.0" }, paths: {} };
}
