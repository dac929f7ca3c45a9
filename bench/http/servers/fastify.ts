/**
 * GET product on Fastify 5 with its recommended setup: its own logger (pino) for the request
 * log (Fastify's two default request lines off, one line with our fields in `onResponse`
 * instead), the route declared with its path parameter, `reply.headers().send()`.
 * @module
 */
import Fastify, { LogController } from "fastify";
import { exitOnSigterm } from "./common.js";
import { answerProduct, logFields, spec } from "./framework-common.js";

const app = Fastify({
  logger: { base: null },
  logController: new LogController({ disableRequestLogging: true }),
  keepAliveTimeout: 65_000,
});
const started = new WeakMap<object, number>();
const ids = new WeakMap<object, string>();

app.addHook("onRequest", (request, _reply, done) => {
  started.set(request, performance.now());
  done();
});
app.addHook("onResponse", (request, reply, done) => {
  const {
    time: _t,
    level: _l,
    msg,
    ...fields
  } = logFields(
    ids.get(request) ?? "",
    request.method,
    request.url.split("?")[0] ?? "",
    reply.statusCode,
    started.get(request) ?? performance.now(),
  );
  request.log.info(fields, msg);
  done();
});
app.get<{ Params: { slug: string } }>("/api/partner/products/:slug", (request, reply) => {
  const key = request.headers["x-api-key"];
  const answer = answerProduct(typeof key === "string" ? key : undefined);
  ids.set(request, answer.headers["x-request-id"] ?? "");
  reply.code(answer.status).headers(answer.headers).send(answer.body);
});

await app.listen({ port: spec.port, host: "127.0.0.1" });
exitOnSigterm(() => app.server.closeAllConnections());
