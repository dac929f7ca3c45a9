/**
 * `@partner-yield/source-evm/testing`: a local anvil node, the test asset and vault, and a client
 * that drives them — for this package's tests, the local demo, and a team's own chain tests.
 * @module
 */
export { type AnvilNode, type AnvilOptions, anvilBinaryPath, startAnvil } from "./anvil.js";
export {
  TEST_TOKEN_BYTECODE,
  TEST_VAULT_BYTECODE,
  testTokenAbi,
  testVaultAbi,
} from "./contracts.js";
export { connectTestChain, type TestChain } from "./test-chain.js";
