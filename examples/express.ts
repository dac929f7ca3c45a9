/** Express 5: one route for everything under `/api/partner`, through `toPlainRequest`. */
import type { PartnerApiHandler } from "@partner-yield/core";
import { toPlainRequest } from "@partner-yield/node-adapter";
import express from "express";
import type { Listening, ListenOptions } from "./listening.js";
import { BASE_PATH } from "./partner-api.js";

export function createExpressApp(api: PartnerApiHandler, basePath = BASE_PATH): express.Express {
  const app = express();
  // No express.json() on this route: the core reads the raw bytes, after authentication, and
  // verifies the HMAC over them. Behind a proxy, set "trust proxy" and pass { clientAddress: req.ip }.
  app.all(`${basePath}/*rest`, async (req, res) => {
    const out = await api.handle(toPlainRequest(req, { clientAddress: req.socket.remoteAddress }));
    res.writeHead(out.status, out.headers).end(out.body ?? undefined);
  });
  return app;
}

export function start(api: PartnerApiHandler, options: ListenOptions = {}): Promise<Listening> {
  const { port = 8787, host = "127.0.0.1", basePath } = options;
  return new Promise((resolve) => {
    const server = createExpressApp(api, basePath).listen(port, host, () => {
      const { port: bound } = server.address() as { port: number };
      resolve({
        url: `http://${host}:${bound}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
