/**
 * The environment a key belongs to and an instance serves (CONTRACT §4, §9): one server instance
 * serves one environment, set at start.
 * @example const env: Environment = "sandbox";
 */
export type Environment = "sandbox" | "production";
