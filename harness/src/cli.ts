#!/usr/bin/env node
/**
 * Entry point of `partner-yield-conformance` (see `main.ts` for the commands).
 * @module
 */
import { main } from "./main.js";

process.exitCode = await main(process.argv.slice(2));
