#!/usr/bin/env node
// The `partner-yield` command: runs the built CLI (dist/cli.js). From a checkout without a build,
// say how to build it or how to run it from source instead.
import { existsSync } from "node:fs";

const cli = new URL("../dist/cli.js", import.meta.url);
if (existsSync(cli)) {
  await import(cli.href);
} else {
  process.stderr.write(
    "partner-yield: the CLI is not built (dist/cli.js is missing).\n" +
      "  Build it:             pnpm build   (builds @partner-yield/core and this package)\n" +
      "  Or run from source:   pnpm serve   (in the repository root)\n",
  );
  process.exitCode = 1;
}
