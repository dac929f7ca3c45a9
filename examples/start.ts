/**
 * Starts one of the Node examples on the team's data: `node --import tsx examples/start.ts hono`
 * (or express, fastify); PORT sets the port (default 8787, 0 for any free one).
 */
import type { Listening, ListenOptions } from "./listening.js";
import { createAcmeApi } from "./partner-api.js";

const FRAMEWORKS = ["express", "fastify", "hono"];
const framework = process.argv[2] ?? "";
if (!FRAMEWORKS.includes(framework)) {
  console.error(`usage: start.ts ${FRAMEWORKS.join("|")}   (PORT=8787 by default)`);
  process.exit(2);
}
const { start } = (await import(`./${framework}.js`)) as {
  start: (api: ReturnType<typeof createAcmeApi>, options: ListenOptions) => Promise<Listening>;
};
const api = createAcmeApi();
const listening = await start(api, { port: Number(process.env["PORT"] ?? 8787) });
console.log(`${framework} listening on ${listening.url}`);
for (const signal of ["SIGTERM", "SIGINT"] as const)
  process.once(signal, () => void listening.close().then(() => api.close()));
