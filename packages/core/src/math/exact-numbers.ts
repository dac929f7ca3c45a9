/**
 * Numbers in event bodies must survive `JSON.parse` exactly (CONTRACT §5 fingerprints the parsed
 * body): two events that differ only in digits a JavaScript number cannot hold would otherwise
 * share a fingerprint, and the second would be acknowledged as a duplicate of the first.
 * @module
 */

/** Significant decimal digits any double holds exactly, whatever the value (IEEE 754: 15). */
export const MAX_EXACT_SIGNIFICANT_DIGITS = 15;

const MIN_NORMAL = 2.2250738585072014e-308;
const NUMBER = /^-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/**
 * Whether a JSON number token denotes exactly the value `Number(token)` holds: a safe integer, or
 * at most 15 significant digits within the normal range of a double.
 * @example isExactJsonNumber("12345678901234567890"); // false
 * @example isExactJsonNumber("0.0523"); // true
 */
export function isExactJsonNumber(token: string): boolean {
  const match = NUMBER.exec(token);
  if (match === null) return false;
  const value = Number(token);
  if (!Number.isFinite(value)) return false;
  const significant = `${match[1]}${match[2] ?? ""}`.replace(/^0+/, "").replace(/0+$/, "");
  if (significant === "") return true; // zero, however written
  if (match[2] === undefined && match[3] === undefined && Number.isSafeInteger(value)) return true;
  return significant.length <= MAX_EXACT_SIGNIFICANT_DIGITS && Math.abs(value) >= MIN_NORMAL;
}

/**
 * The first number token of some (already valid) JSON text that is not exact, or undefined.
 * Scans the text once, skipping strings.
 * @example findInexactNumber('{"a":"123456789012345678901","b":1e400}'); // "1e400"
 */
export function findInexactNumber(json: string): string | undefined {
  const length = json.length;
  let i = 0;
  while (i < length) {
    const c = json.charCodeAt(i);
    if (c === 34 /* " */) {
      i = stringEnd(json, i + 1);
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const start = i++;
      while (i < length) {
        const d = json.charCodeAt(i);
        // digits . e E + -
        if ((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45) i++;
        else break;
      }
      const token = json.slice(start, i);
      if (!isExactJsonNumber(token)) return token;
    } else {
      i++;
    }
  }
  return undefined;
}

/**
 * The index after the `"` closing a string whose content starts at `from`: jumps from quote to
 * quote (`indexOf`), a quote preceded by an odd number of backslashes being escaped.
 */
function stringEnd(json: string, from: number): number {
  let at = from;
  for (;;) {
    const quote = json.indexOf('"', at);
    if (quote === -1) return json.length;
    let backslashes = 0;
    while (quote - backslashes - 1 >= from && json.charCodeAt(quote - backslashes - 1) === 92) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}
