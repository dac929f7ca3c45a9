/**
 * The Redis `maxmemory-policy` the limiter needs: `noeviction`. Every limiter key has a TTL (it
 * expires with its last hit), so the `volatile-*` policies may evict it as surely as the
 * `allkeys-*` ones: under memory pressure Redis would drop a partner's window (a fresh quota) or
 * a client's failed-authentication count (fresh guesses). With `noeviction`, a full Redis refuses
 * the script's writes instead, and the API answers 503 (fail closed, CONTRACT §6).
 * @module
 */
import type { Redis } from "ioredis";

/** The one policy under which no limiter key is ever evicted. */
export const REQUIRED_EVICTION_POLICY = "noeviction";

/** Redis is set to evict keys: the limiter's windows could be reset. */
export class EvictionPolicyError extends Error {
  override readonly name = "EvictionPolicyError";
  readonly code = "eviction_policy";

  constructor(readonly policy: string) {
    super(
      `redis: maxmemory-policy is ${policy}: under memory pressure Redis may evict rate-limit keys (each has a TTL, so volatile-* policies evict them too), resetting a partner's quota or a client's failed-authentication count; set \`maxmemory-policy ${REQUIRED_EVICTION_POLICY}\` (CONFIG SET or redis.conf), or give partner-yield a Redis of its own`,
    );
  }
}

/** What the check found: the policy, or why it could not be read (a managed Redis may refuse CONFIG). */
export type EvictionPolicyCheck =
  | { readonly checked: true; readonly policy: string }
  | { readonly checked: false; readonly reason: string };

/**
 * Reads `maxmemory-policy` (`CONFIG GET`).
 * @throws EvictionPolicyError when it is anything but `noeviction`.
 * @example
 * const check = await checkEvictionPolicy(redis);
 * if (!check.checked) console.warn(`cannot check maxmemory-policy: ${check.reason}`);
 */
export async function checkEvictionPolicy(redis: Redis): Promise<EvictionPolicyCheck> {
  let reply: unknown;
  try {
    reply = await redis.config("GET", "maxmemory-policy");
  } catch (error) {
    return { checked: false, reason: error instanceof Error ? error.message : String(error) };
  }
  const policy = Array.isArray(reply) && typeof reply[1] === "string" ? reply[1] : undefined;
  if (policy === undefined) return { checked: false, reason: "CONFIG GET maxmemory-policy answered nothing" };
  if (policy !== REQUIRED_EVICTION_POLICY) throw new EvictionPolicyError(policy);
  return { checked: true, policy };
}
