/**
 * @partner-yield/harness: the conformance runner and the auditors' property suite, as a library.
 * The CLI (`partner-yield-conformance`) is a thin layer over these.
 * @module
 */
export { type CertifyOptions, type CertifyResult, certify } from "./certify.js";
export { CheckContext, CheckFailure, CheckSkipped, CheckWarning } from "./checks/context.js";
export type { CheckDefinition, ResponseCheck, ScenarioCheck } from "./checks/definition.js";
export { ResponseJudge } from "./checks/judge.js";
export { CHECKS, checkById } from "./checks/registry.js";
export {
  type Category,
  type CheckKind,
  type CheckResult,
  type CheckStatus,
  type Citation,
  FAILURE_KINDS,
  type FailureKind,
  type Level,
  type PlanOptions,
} from "./checks/types.js";
export { ConfigError, DEFAULTS, ENV } from "./config.js";
export {
  type DemoCredentials,
  type EmbeddedOptions,
  type EmbeddedTarget,
  embeddedSettings,
  type SandboxInputs,
  sandboxInputs,
  startEmbeddedTarget,
} from "./embedded.js";
export { ALTERNATIVES, type Alternative, combinedAlternatives } from "./faults/alternatives.js";
export { FAULTS, type Fault } from "./faults/faults.js";
export { type HandlerWrapper, startFaultyTarget } from "./faults/server.js";
export { type Exchange, HttpClient, type RequestSpec } from "./http/client.js";
export { toCurl } from "./http/curl.js";
export { main } from "./main.js";
export { expectedPosition, loadReferenceFixtures, type ReferenceFixtures } from "./oracle/fixtures.js";
export { convertedAssets, usdValue } from "./oracle/position.js";
export { expectedQuote, monthlyFactor, netApyUnits } from "./oracle/yield.js";
export { API_PROPERTIES, type ApiPropertyDefinition } from "./properties/api-properties.js";
export { type ApiPropertyReport, runApiProperties } from "./properties/api-run.js";
export { PROPERTIES, type PropertyDefinition } from "./properties/registry.js";
export { type PropertyReport, type PropertyResult, runProperties } from "./properties/run.js";
export { Redactor } from "./redact.js";
export { toJson } from "./reporters/json.js";
export { toJUnit } from "./reporters/junit.js";
export { type Plan, planRun, type RunReport, type RunSettings, runConformance } from "./runner.js";
export { defaultBurst, TokenBucket } from "./throttle.js";
export { VERSION } from "./version.js";
