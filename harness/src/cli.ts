#!/usr/bin/env node
/**
 * Entry point of `partner-yield-conformance` (see `main.ts` for the commands).
 * @module
 */
import { main } from "./main.js";

// A reader that stops early (`… list | head`) is not an error: what it did not read is dropped.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

process.exitCode = await main(process.argv.slice(2));
