/** Fastify 5 with `@partner-yield/fastify`: the API as a plugin under its base path, beside the app's routes. */
import type { PartnerApi } from "@partner-yield/core";
import { partnerYield, partnerYieldFrameworkErrors } from "@partner-yield/fastify";
import Fastify, { type FastifyInstance } from "fastify";
import type { Listening, ListenOptions } from "./listening.js";

export async function createFastifyApp(api: PartnerApi): Promise<FastifyInstance> {
  // frameworkErrors: a URL Fastify cannot decode under the API's path is answered by the core, in
  // problem+json; requestTimeout: Fastify sets none, and a client that stops sending would hold close().
  const app = Fastify({ frameworkErrors: partnerYieldFrameworkErrors(), requestTimeout: 30_000 });
  // The plugin reads no body (the core reads the raw bytes) and keeps that to its own scope: the
  // app's other routes keep Fastify's parsers. Behind a proxy, set trustProxy: the core counts request.ip.
  await app.register(partnerYield, { api, prefix: api.basePath });
  return app;
}

export async function start(api: PartnerApi, options: ListenOptions = {}): Promise<Listening> {
  const { port = 8787, host = "127.0.0.1" } = options;
  const app = await createFastifyApp(api);
  const url = await app.listen({ port, host });
  return { url, close: () => app.close() };
}
