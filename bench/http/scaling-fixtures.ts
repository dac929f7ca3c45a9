/**
 * Fixtures for the products scaling run: the repository's fixtures, with northwind's first
 * product cloned `count - 1` times (new slug `bench-<i>`, own wrapper address)
 * after the original. Written to a new temporary directory, returned.
 * @module
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURES = fileURLToPath(new URL("../../fixtures/", import.meta.url));

export function productFixtures(count: number): { dir: string; lastSlug: string; total: number } {
  const dir = mkdtempSync(join(tmpdir(), "partner-yield-bench-products-"));
  for (const file of ["partners.json", "prices.json", "vaults.json"]) {
    copyFileSync(join(FIXTURES, file), join(dir, file));
  }
  const products = JSON.parse(readFileSync(join(FIXTURES, "products.json"), "utf8")) as Record<
    string,
    unknown
  >[];
  const template = products[0]!;
  let lastSlug = String(template["slug"]);
  for (let i = 1; i < count; i++) {
    lastSlug = `bench-${i}`;
    products.push({
      ...template,
      slug: lastSlug,
      wrapper_address: `0x${(0xb000000 + i).toString(16).padStart(40, "0")}`,
      display_name: `Bench product ${i}`,
    });
  }
  writeFileSync(join(dir, "products.json"), JSON.stringify(products));
  return { dir, lastSlug, total: products.length };
}
