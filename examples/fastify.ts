/** Fastify 5: the raw request goes to the core, which reads the body itself. */
import type { PartnerApiHandler } from "@partner-yield/core";
import { toPlainRequest } from "@partner-yield/node-adapter";
import Fastify, { type FastifyInstance } from "fastify";
import type { Listening, ListenOptions } from "./listening.js";
import { BASE_PATH } from "./partner-api.js";

export function createFastifyApp(api: PartnerApiHandler, basePath = BASE_PATH): FastifyInstance {
  const app = Fastify();
  // Fastify's JSON parser would consume the body and hand over an object: the HMAC needs the exact
  // bytes, which the core reads from request.raw after authentication. So parse nothing here.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null));
  app.all(`${basePath}/*`, async (request, reply) => {
    const out = await api.handle(toPlainRequest(request.raw, { clientAddress: request.ip }));
    return reply.code(out.status).headers(out.headers).send(out.body);
  });
  return app;
}

export async function start(api: PartnerApiHandler, options: ListenOptions = {}): Promise<Listening> {
  const { port = 8787, host = "127.0.0.1", basePath } = options;
  const app = createFastifyApp(api, basePath);
  const url = await app.listen({ port, host });
  return { url, close: () => app.close() };
}
