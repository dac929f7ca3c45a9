/**
 * `serve` without a data source: neither fixtures to read nor a database.
 * @module
 */
import { existsSync } from "node:fs";

/**
 * Why `serve` has nothing to serve, or undefined: without `--database-url`, the fixtures directory
 * must exist. The default is the sandbox fixtures the node adapter's package carries; one installed
 * without them has none: the message names both ways to give it data.
 * @example missingDataSource("/nope", false); // "no data to serve: the fixtures directory /nope does not exist; …"
 */
export function missingDataSource(dir: string, isDefault: boolean): string | undefined {
  if (existsSync(dir)) return undefined;
  const which = isDefault
    ? `no --fixtures was given and the default fixtures directory ${dir} does not exist (the node adapter was installed without its sandbox fixtures)`
    : `the fixtures directory ${dir} does not exist`;
  return (
    `no data to serve: ${which}. Give --fixtures DIR (or PARTNER_YIELD_FIXTURES) with partners.json, ` +
    "products.json, vaults.json and prices.json for a sandbox from files, or --database-url URL (or " +
    "DATABASE_URL) for PostgreSQL after `partner-yield db migrate` and `db import-fixtures DIR`."
  );
}
