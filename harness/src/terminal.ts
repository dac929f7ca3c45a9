/**
 * What the CLI echoes of its command line goes through the core's terminal escaping, the one
 * every partner-yield CLI uses: control, bidi and zero-width characters escaped (no ESC or OSC
 * sequence reaches the terminal), a value cut to 80 characters, a key or secret never echoed.
 * Taken from the core here, in one module, like the schemas in `checks/from-core.ts`.
 * @module
 */
export { echoInput, escapeUnsafe } from "@partner-yield/core/adapters";
