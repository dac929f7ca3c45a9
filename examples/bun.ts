/**
 * Bun: `Bun.serve` with the core's fetch handler; the client address from `server.requestIP`.
 * Run: `bun examples/bun.ts` (PORT, default 8787).
 */
import { toFetchHandler } from "@partner-yield/core";
import { createAcmeApi } from "./partner-api.js";

const api = createAcmeApi();
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env["PORT"] ?? 8787),
  fetch: (request, server) =>
    toFetchHandler(api, { clientAddress: () => server.requestIP(request)?.address })(request),
});
console.log(`listening on ${server.url.origin}`);
