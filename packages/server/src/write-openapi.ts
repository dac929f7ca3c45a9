/**
 * Writes the OpenAPI 3.1 document generated from the core's zod schemas to docs/openapi.json.
 *
 *   tsx packages/server/src/write-openapi.ts            write (or leave an up-to-date file alone)
 *   tsx packages/server/src/write-openapi.ts --check    exit 1 when the file is stale (CI)
 *   tsx packages/server/src/write-openapi.ts --out FILE write somewhere else
 * @module
 */
import { parseArgs } from "node:util";
import { DEFAULT_OPENAPI_PATH, writeOpenApiDocument } from "./openapi-file.js";

let values: { check?: boolean; out?: string; help?: boolean };
try {
  values = parseArgs({
    strict: true,
    options: { check: { type: "boolean" }, out: { type: "string" }, help: { type: "boolean", short: "h" } },
  }).values;
} catch (error) {
  process.stderr.write(
    `write-openapi: ${(error as Error).message}\nUsage: write-openapi [--check] [--out FILE]\n`,
  );
  process.exit(2);
}
if (values.help === true) {
  process.stdout.write(
    "Usage: write-openapi [--check] [--out FILE]\n" +
      `  Writes the generated OpenAPI document to FILE (default ${DEFAULT_OPENAPI_PATH}).\n` +
      "  --check  write nothing; exit 1 when the file differs from the schemas\n",
  );
  process.exit(0);
}
const result = writeOpenApiDocument(values.out ?? DEFAULT_OPENAPI_PATH, { check: values.check === true });
if (values.check === true) {
  if (result.upToDate) process.stdout.write(`${result.path} is up to date\n`);
  else {
    process.stderr.write(`${result.path} is stale: run \`pnpm openapi\` and commit the result\n`);
    process.exitCode = 1;
  }
} else {
  process.stdout.write(result.written ? `wrote ${result.path}\n` : `${result.path} is already up to date\n`);
}
