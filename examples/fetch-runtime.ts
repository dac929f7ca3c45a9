/**
 * A Web-standard runtime (Cloudflare Workers, Deno Deploy, Vercel Edge, …): export the core's fetch
 * handler. The client address comes from the platform: `CF-Connecting-IP` on Workers; on Deno,
 * `Deno.serve((req, info) => toFetchHandler(api, { clientAddress: () => info.remoteAddr.hostname })(req))`.
 */
import { toFetchHandler } from "@partner-yield/core";
import { createAcmeApi } from "./partner-api.js";

export default {
  fetch: toFetchHandler(createAcmeApi(), {
    clientAddress: (request) => request.headers.get("cf-connecting-ip") ?? undefined,
  }),
};
