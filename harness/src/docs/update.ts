/**
 * Regenerates the tables and sample outputs of docs/conformance.md and docs/math.md.
 *
 *   pnpm docs:tables          rewrite the docs
 *   pnpm docs:tables --check  exit 1 when a doc is out of date
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { GENERATED_BLOCKS, renderBlocks } from "./blocks.js";

const root = new URL("../../../", import.meta.url);
const check = process.argv.includes("--check");
let stale = 0;
for (const file of Object.keys(GENERATED_BLOCKS) as Array<keyof typeof GENERATED_BLOCKS>) {
  const url = new URL(file, root);
  const before = readFileSync(url, "utf8");
  const after = await renderBlocks(file, before);
  if (after === before) continue;
  stale++;
  if (check) process.stderr.write(`${file} is out of date: run pnpm docs:tables\n`);
  else {
    writeFileSync(url, after);
    process.stdout.write(`updated ${file}\n`);
  }
}
process.exitCode = check && stale > 0 ? 1 : 0;
