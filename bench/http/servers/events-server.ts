/**
 * For the events scaling run: our server (`startServer`, as the CLI starts it, JSON request log
 * on, limiter on) over an in-memory event store pre-filled with `prefill` events through the
 * store's public `append`. The CLI cannot pre-fill a store, hence this script. The store's bounds
 * (100,000 events and 256 MiB by default) are lifted above the largest prefill.
 * @module
 */
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as Core from "../../../packages/core/src/index.js";
import type * as Adapter from "../../../packages/node-adapter/src/index.js";
import { apiEvent } from "./api-event.js";

interface EventsSpec {
  readonly port: number;
  readonly prefill: number;
}

// From bench/http/.build/servers/: the repository's built packages.
const root = fileURLToPath(new URL("../../../../", import.meta.url));
const core = (await import(pathToFileURL(join(root, "packages/core/dist/index.js")).href)) as typeof Core;
const adapter = (await import(
  pathToFileURL(join(root, "packages/node-adapter/dist/index.js")).href
)) as typeof Adapter;

const spec = JSON.parse(process.env["BENCH_SPEC"] ?? "{}") as EventsSpec;
const events = new core.MemoryEventStore({
  maxEvents: spec.prefill + 1_000_000,
  maxEventBytes: Number.MAX_SAFE_INTEGER,
});
// As the API appends them: each its own raw body, its strings parsed from it, `data` too.
for (let i = 0; i < spec.prefill; i++) await events.append(apiEvent(i, `prefill-${i}`));
const server = await adapter.startServer({
  port: spec.port,
  events,
  rateLimitQuota: 1_000_000_000,
  log: "json",
});
process.once("SIGTERM", () => {
  void server.close().then(() => process.exit(0));
});
