#!/usr/bin/env node
// Runs the built CLI (dist/cli.js). From a source checkout without a build, say how to proceed.
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    "partner-yield-conformance: the harness is not built (no dist/cli.js).\n" +
      "  build it:            pnpm build   (from the repository root: core, node-adapter, then the harness)\n" +
      "  or run from source:  pnpm conformance …   (or npx -y pnpm@10 conformance …, from the repository root)\n",
  );
  process.exit(2);
}
await import(entry.href);
