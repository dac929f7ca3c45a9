/**
 * The harness version, printed in every report (kept equal to package.json by a test).
 * @example VERSION; // "0.1.0"
 */
export const VERSION = "0.1.0";
