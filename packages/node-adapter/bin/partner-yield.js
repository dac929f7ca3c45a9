#!/usr/bin/env node
// The partner-yield CLI moved to @partner-yield/server (packages/server/bin/partner-yield.js). This
// forwarder keeps the old path working in a checkout for bench/http/run.ts, which still starts
// the CLI here; it is not published (node-adapter has no `bin` and does not ship bin/). Remove it
// once bench/http starts the CLI through bench/built-cli.ts's cliBin().
await import("../../server/bin/partner-yield.js");
