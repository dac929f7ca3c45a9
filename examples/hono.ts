/** Hono on Node (`@hono/node-server`): the core's fetch handler under `/api/partner/*`. */
import { type HttpBindings, serve } from "@hono/node-server";
import { type PartnerApiHandler, toFetchHandler } from "@partner-yield/core";
import { Hono } from "hono";
import type { Listening, ListenOptions } from "./listening.js";
import { BASE_PATH } from "./partner-api.js";

export function createHonoApp(
  api: PartnerApiHandler,
  basePath = BASE_PATH,
): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  // The core reads the raw body itself (c.req.raw): no body parser, the HMAC is over the exact bytes.
  // The client address, for the failed-authentication limit, is the Node socket's.
  app.all(`${basePath}/*`, (c) =>
    toFetchHandler(api, { clientAddress: () => c.env.incoming.socket.remoteAddress })(c.req.raw),
  );
  return app;
}

export function start(api: PartnerApiHandler, options: ListenOptions = {}): Promise<Listening> {
  const { port = 8787, host: hostname = "127.0.0.1", basePath } = options;
  return new Promise((resolve) => {
    const server = serve({ fetch: createHonoApp(api, basePath).fetch, port, hostname }, (info) =>
      resolve({
        url: `http://${hostname}:${info.port}`,
        close: () => new Promise((done) => server.close(() => done())),
      }),
    );
  });
}
