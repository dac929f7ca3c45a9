/**
 * `docs/openapi.json`: the core's generated OpenAPI document, serialised one stable way so the
 * committed file can be compared byte for byte (the drift test, `write-openapi.ts --check`).
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildOpenApiDocument } from "@partner-yield/core";

/** The repository's `docs/openapi.json`, resolved from this file, not the cwd. */
export const DEFAULT_OPENAPI_PATH: string = fileURLToPath(
  new URL("../../../docs/openapi.json", import.meta.url),
);

/**
 * The document as committed: two-space JSON and a final newline.
 * @example JSON.parse(openApiJson()).openapi; // "3.1.0"
 */
export function openApiJson(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}

/**
 * Writes the document to `path` (default `docs/openapi.json`); with `check`, writes nothing and
 * reports whether the file is up to date.
 * @example writeOpenApiDocument(); // { path: ".../docs/openapi.json", upToDate: false, written: true }
 */
export function writeOpenApiDocument(
  path: string = DEFAULT_OPENAPI_PATH,
  options: { check?: boolean } = {},
): { path: string; upToDate: boolean; written: boolean } {
  const json = openApiJson();
  let current: string | undefined;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    current = undefined;
  }
  const upToDate = current === json;
  if (upToDate || options.check === true) return { path, upToDate, written: false };
  writeFileSync(path, json);
  return { path, upToDate, written: true };
}
