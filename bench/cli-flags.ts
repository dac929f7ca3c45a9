/**
 * Flag handling shared by the benchmark scripts (flood, soak, fuzz, bench:http): strict parsing
 * whose errors are one line and exit 2 (not a stack trace), `-h`/`--help` printing the script's
 * text, and integer flags checked against a range.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;
type WithHelp<O extends OptionsConfig> = O & { help: { type: "boolean"; short: "h" } };
type Config<O extends OptionsConfig> = { options: WithHelp<O>; strict: true; allowPositionals: false };
/** The parsed flag values for `options` (and `help`). */
export type Flags<O extends OptionsConfig> = ReturnType<typeof parseArgs<Config<O>>>["values"];

/** Prints `script: message; see --help` and exits 2. */
export function usageError(script: string, message: string): never {
  process.stderr.write(`${script}: ${message}; see --help\n`);
  process.exit(2);
}

/**
 * Parses `process.argv` with `options` plus `-h`/`--help`; prints `help` and exits 0 on `--help`,
 * prints `script: <error>; see --help` and exits 2 on an unknown flag, a missing value or a
 * positional argument.
 */
export function parseFlags<const O extends OptionsConfig>(
  script: string,
  help: string,
  options: O,
): Flags<O> {
  const config: Config<O> = {
    options: { ...options, help: { type: "boolean", short: "h" } },
    strict: true,
    allowPositionals: false,
  };
  let values: Flags<O>;
  try {
    values = parseArgs(config).values;
  } catch (error) {
    usageError(
      script,
      (error as Error).message.replace(/\. To specify a positional.*$/s, "").replace(/\s*\n\s*/g, " "),
    );
  }
  if ((values as { help?: boolean }).help === true) {
    process.stdout.write(help);
    process.exit(0);
  }
  return values;
}

/**
 * The integer-flag reader of `script`: `intFlag(name, given, fallback, min, max)` is `given` as an
 * integer from `min` to `max`, `fallback` when the flag is absent; anything else exits 2.
 */
export function intFlagOf(
  script: string,
): (name: string, given: string | undefined, fallback: number, min: number, max: number) => number {
  return (name, given, fallback, min, max) => {
    if (given === undefined) return fallback;
    const n = Number(given);
    if (given.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
      usageError(script, `--${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(given)})`);
    }
    return n;
  };
}
