/**
 * Shared fast-check settings for the property suites. Reproducible failures: a failing property
 * throws an error whose message holds `seed` and `path`; pass them back as FC_SEED and FC_PATH.
 *
 *   FC_NUM_RUNS  runs per property (default 200)
 *   FC_SEED      seed (default: 20261123 when CI is set, otherwise random)
 *   FC_PATH      replay path printed by a failure (needs FC_SEED)
 *
 * @example fc.assert(fc.property(fc.bigInt(), (x) => x === x), fcParams());
 */
import fc from "fast-check";

/** The seed CI runs with, so its failures are reproducible from the log alone. */
export const CI_SEED = 20261123;

function integerFromEnv(name: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed))
    throw new Error(`${name} must be an integer, got ${JSON.stringify(value)}`);
  return parsed;
}

/**
 * fast-check parameters from the environment (see the module comment).
 * @example FC_SEED=-1234 FC_PATH=3:1:0 npx tsx --test packages/core/test/yield-math.test.ts
 */
export function fcParams<T = unknown>(): fc.Parameters<T> {
  const env = process.env;
  const numRuns = env["FC_NUM_RUNS"] ? integerFromEnv("FC_NUM_RUNS", env["FC_NUM_RUNS"]) : 200;
  const seed = env["FC_SEED"] ? integerFromEnv("FC_SEED", env["FC_SEED"]) : env["CI"] ? CI_SEED : undefined;
  const path = env["FC_PATH"] || undefined;
  if (path !== undefined && seed === undefined)
    throw new Error("FC_PATH replays a failure only with its FC_SEED");
  return {
    numRuns,
    // Verbose: the error lists the failures met while shrinking, besides seed, path and counterexample.
    verbose: fc.VerbosityLevel.Verbose,
    ...(seed === undefined ? {} : { seed }),
    ...(path === undefined ? {} : { path }),
  };
}
