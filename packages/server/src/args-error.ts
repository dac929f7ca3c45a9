/**
 * The message of a `node:util` `parseArgs` refusal, as a CLI may print it: node quotes the
 * offending argument raw (`Unknown option '--keys<ESC>]0;pwn<BEL>'`), whatever its length and
 * whatever control sequences it holds. The argument is re-quoted with the core's `echoInput`
 * (escaped, cut to 80 characters, never a key or secret); any other message is escaped and cut.
 * @module
 */
import { ECHO_MAX_LENGTH, echoInput, escapeUnsafe } from "@partner-yield/core/adapters";

const UNKNOWN_OPTION = /^Unknown option '([\s\S]*?)'(?:\. To specify a positional argument|$)/;
const UNEXPECTED_ARGUMENT =
  /^Unexpected argument '([\s\S]*?)'\. This command does not take positional arguments/;

/** The longest other message kept (node's own wording, with the option names of the command). */
const MAX_MESSAGE = 4 * ECHO_MAX_LENGTH;

/**
 * @example argsErrorMessage(new Error("Unknown option '--nope'")); // 'Unknown option "--nope"'
 */
export function argsErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const unknown = UNKNOWN_OPTION.exec(message);
  if (unknown !== null) {
    // Node's hint for a command that takes arguments, without its second copy of the argument.
    const hint = message.includes(". To specify a positional argument")
      ? '; an argument that starts with "-" goes at the end, after "--"'
      : "";
    return `Unknown option ${echoInput(unknown[1]!)}${hint}`;
  }
  const unexpected = UNEXPECTED_ARGUMENT.exec(message);
  if (unexpected !== null) return `Unexpected argument ${echoInput(unexpected[1]!)}: this command takes none`;
  // "Option '--x <value>' argument missing" and the like name the command's own options; an
  // ambiguous value ("… use '--x=-value'") quotes the argument: escaped, and cut.
  const escaped = escapeUnsafe(message, { keepNewlines: true });
  return escaped.length > MAX_MESSAGE ? `${escaped.slice(0, MAX_MESSAGE)}…` : escaped;
}
