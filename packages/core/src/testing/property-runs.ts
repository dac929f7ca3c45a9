/**
 * Shared fast-check settings for property tests, from the environment, so that a failure is
 * reproducible: a failing property throws an error whose message holds `seed` and `path`; pass
 * them back as FC_SEED and FC_PATH.
 *
 *   FC_NUM_RUNS  runs per property (default 200)
 *   FC_SEED      seed (default: CI_SEED when CI is set, otherwise random)
 *   FC_PATH      replay path printed by a failure (needs FC_SEED)
 *
 * The environment is an argument (the core reads no `process`), and nothing is imported from
 * fast-check: the settings are a plain object that `fc.assert` takes as its parameters.
 * @module
 */

/** The seed CI runs with, so its failures are reproducible from the log alone. */
export const CI_SEED = 20261123;

/** What `fcParams` gives: a subset of fast-check's `Parameters`. */
export interface PropertyRunSettings {
  readonly numRuns: number;
  /** fast-check's `VerbosityLevel.Verbose`: the error lists the failures met while shrinking. */
  readonly verbose: true;
  readonly seed?: number;
  readonly path?: string;
}

/**
 * fast-check parameters from `env`, the environment variables (see the module comment).
 * @example fc.assert(fc.property(fc.bigInt(), (x) => x === x), fcParams(env));
 */
export function fcParams(env: Readonly<Record<string, string | undefined>>): PropertyRunSettings {
  const numRuns = env["FC_NUM_RUNS"] ? integerFromEnv("FC_NUM_RUNS", env["FC_NUM_RUNS"]) : 200;
  const seed = env["FC_SEED"] ? integerFromEnv("FC_SEED", env["FC_SEED"]) : env["CI"] ? CI_SEED : undefined;
  const path = env["FC_PATH"] || undefined;
  if (path !== undefined && seed === undefined)
    throw new Error("FC_PATH replays a failure only with its FC_SEED");
  return {
    numRuns,
    verbose: true,
    ...(seed === undefined ? {} : { seed }),
    ...(path === undefined ? {} : { path }),
  };
}

function integerFromEnv(name: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed))
    throw new Error(`${name} must be an integer, got ${JSON.stringify(value)}`);
  return parsed;
}
