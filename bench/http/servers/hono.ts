/**
 * GET product on Hono 4 with @hono/node-server, its recommended Node setup (`serve({ fetch })`):
 * a middleware writes the JSON request log line with our fields; the handler answers with `c.body`.
 * @module
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { exitOnSigterm } from "./common.js";
import { answerProduct, logFields, spec } from "./framework-common.js";

const app = new Hono();
app.use(async (c, next) => {
  const started = performance.now();
  await next();
  const line = logFields(
    c.res.headers.get("x-request-id") ?? "",
    c.req.method,
    c.req.path,
    c.res.status,
    started,
  );
  process.stdout.write(`${JSON.stringify(line)}\n`);
});
app.get("/api/partner/products/:slug", (c) => {
  const answer = answerProduct(c.req.header("x-api-key"));
  return c.body(answer.body, answer.status as 200, answer.headers);
});

const server = serve({ fetch: app.fetch, port: spec.port, hostname: "127.0.0.1" });
(server as import("node:http").Server).keepAliveTimeout = 65_000;
exitOnSigterm(() => (server as import("node:http").Server).closeAllConnections());
