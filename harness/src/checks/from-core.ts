/**
 * Everything the checks take from `@partner-yield/core`, in one place: the response schemas that
 * level `reference` validates bodies against (strict zod, the same schemas that generate the
 * OpenAPI document) and the EIP-55 checksum (keccak-256). Every expected figure — net APY, yield,
 * positions, decimals — comes from the harness's own oracle (`../oracle/`), never from the core,
 * so a bug in the core cannot hide behind a deployment that embeds it.
 * @module
 */
export {
  EventAck,
  PositionResponse,
  Problem,
  ProductListResponse,
  ProductResponse,
  toChecksumAddress,
  YieldCalculationResponse,
} from "@partner-yield/core";
