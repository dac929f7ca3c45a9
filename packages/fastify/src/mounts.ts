/**
 * Where each registration of the plugin answers, per server: Fastify rejects some URLs before any
 * route or hook of a plugin sees them (`frameworkErrors`), and the handler that answers those needs
 * to know which of them fall under a mount.
 * @module
 */
import type { PartnerApiHandler } from "@partner-yield/core";
import { splitTarget } from "@partner-yield/node-adapter";

/** A registration of the plugin: the path it answers under and the API behind it. */
export interface Mount {
  readonly path: string;
  readonly api: PartnerApiHandler;
}

const MOUNTS = new WeakMap<object, Mount[]>();

/** Records `mount` for the node server `server` (a Fastify instance's `.server`, shared by its plugins). */
export function addMount(server: object, mount: Mount): void {
  const mounts = MOUNTS.get(server) ?? [];
  mounts.push(mount);
  MOUNTS.set(server, mounts);
}

/**
 * The mount whose path holds the request target `target` (as received, not decoded), the longest
 * when mounts nest; undefined when none does.
 * @example mountOf(server, "/yield/v1/products/%FF")?.path; // "/yield/v1"
 */
export function mountOf(server: object, target: string): Mount | undefined {
  const { path } = splitTarget(target);
  let found: Mount | undefined;
  for (const mount of MOUNTS.get(server) ?? []) {
    const under = path === mount.path || path.startsWith(`${mount.path}/`);
    if (under && (found === undefined || mount.path.length > found.path.length)) found = mount;
  }
  return found;
}
