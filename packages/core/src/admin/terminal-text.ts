/**
 * Text that reaches a terminal or a listing: what must never be stored in a name or a label, and
 * how a command-line value is echoed. A terminal obeys control sequences (ESC `]0;…BEL` retitles
 * the window, CSI moves the cursor or clears the screen), and bidirectional controls, zero-width
 * characters and line separators make a listing show other text than it holds (Trojan Source,
 * CVE-2021-42574). One definition of "unsafe" for both: Unicode's control (Cc), format (Cf),
 * line and paragraph separator (Zl, Zp) characters and lone surrogates (Cs) — C0 and C1 controls
 * and DEL, U+200B–U+200F, U+202A–U+202E, U+2060–U+2069, U+061C, U+FEFF, U+2028, U+2029 among them.
 * @module
 */
import { looksLikeCredential } from "../auth/credential-shape.js";

const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const UNSAFE_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** Default of `echoInput`'s `maxLength`: a value's echo fits a line with its message. */
export const ECHO_MAX_LENGTH = 80;

/**
 * Whether `text` holds a character a terminal or a listing must not be given raw.
 * @example hasUnsafeCharacter("Acme\u202eetaf"); // true: a right-to-left override
 * @example hasUnsafeCharacter("Café Zürich"); // false
 */
export function hasUnsafeCharacter(text: string): boolean {
  return UNSAFE.test(text);
}

/**
 * `text` with every unsafe character written as an escape (`\x1b`, `\u{202e}`); with
 * `keepNewlines`, a `\n` stays a line break (a message of several lines). Backslashes are left as
 * they are, so a message whose values `echoInput` quoted can be escaped again as it is written.
 * @example escapeUnsafe("keys\u001b]0;pwn\u0007"); // "keys\\x1b]0;pwn\\x07"
 */
export function escapeUnsafe(text: string, options: { readonly keepNewlines?: boolean } = {}): string {
  if (!UNSAFE.test(text)) return text;
  return text.replace(UNSAFE_ALL, (c) => {
    if (c === "\n" && options.keepNewlines === true) return c;
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/**
 * A value from the user (an unknown command, option or value) as a message may quote it: in
 * double quotes, unsafe characters escaped (and `\` and `"`, so the echo reads back
 * unambiguously), cut to `maxLength` characters with an ellipsis — and
 * not at all when it looks like an API key or signing secret, in any case.
 * @example echoInput("keys\u001b]0;pwn\u0007"); // '"keys\\x1b]0;pwn\\x07"'
 * @example echoInput("x".repeat(200)).length; // 83: 80 characters, the ellipsis and two quotes
 * @example echoInput("YPK_TEST_abc"); // "(a key or secret: not echoed)"
 */
export function echoInput(value: string, maxLength: number = ECHO_MAX_LENGTH): string {
  if (looksLikeCredential(value.toLowerCase())) return "(a key or secret: not echoed)";
  let out = "";
  for (const c of value) {
    const piece = c === "\\" || c === '"' ? `\\${c}` : escapeUnsafe(c);
    if (out.length + piece.length > maxLength) return `"${out}…"`;
    out += piece;
  }
  return `"${out}"`;
}
