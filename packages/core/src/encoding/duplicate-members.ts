/**
 * Duplicate member names in JSON text (RFC 8259 §4: names SHOULD be unique; parsers disagree on
 * which value wins). `JSON.parse` keeps the last silently, so a body with `event_type` twice would
 * be read as one event here and as another by a parser that keeps the first. This scanner finds the
 * first duplicated name, compared after unescaping (`"a"` and `"\u0061"` are the same name).
 *
 * It runs on text `JSON.parse` has accepted, so it validates nothing: it jumps from quote to quote
 * with `indexOf`, decodes only names that hold a backslash, and keeps no recursion (any depth).
 * @module
 */

interface Frame {
  /** Null for an array. */
  names: string[] | Set<string> | null;
  /** The current member's name (object) or element's index (array). */
  segment: string | number;
  /** Object: the next string is a name. */
  expectName: boolean;
}

/** Objects with more members than this switch from a linear scan to a Set. */
const LINEAR_LIMIT = 12;

/**
 * The path (names and array indexes) of the first member whose name repeats one earlier in the
 * same object, or undefined when every object's names are distinct.
 * @param text JSON that `JSON.parse` accepts (anything else gives an unspecified answer).
 * @example findDuplicateMember('{"a":{"b":1,"b":2}}'); // ["a", "b"]
 */
export function findDuplicateMember(text: string): (string | number)[] | undefined {
  const stack: Frame[] = [];
  let top: Frame | undefined;
  let nextBackslash = -2; // position of the next "\" at or after the scan, -1: none left
  const length = text.length;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      if (nextBackslash !== -1 && nextBackslash < i + 1) nextBackslash = text.indexOf("\\", i + 1);
      let end = text.indexOf('"', i + 1);
      let escaped = false;
      while (nextBackslash !== -1 && nextBackslash < end) {
        escaped = true;
        // An escape takes the character after the backslash, a quote included.
        const after = nextBackslash + 2;
        if (after > end) end = text.indexOf('"', after);
        nextBackslash = text.indexOf("\\", after);
      }
      if (top?.expectName) {
        const name = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        if (!remember(top, name)) {
          const path = stack.map((frame) => frame.segment);
          path[path.length - 1] = name;
          return path;
        }
        top.segment = name;
        top.expectName = false;
      }
      i = end + 1;
      continue;
    }
    if (c === 0x7b /* { */) {
      top = { names: [], segment: "", expectName: true };
      stack.push(top);
    } else if (c === 0x5b /* [ */) {
      top = { names: null, segment: 0, expectName: false };
      stack.push(top);
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      top = stack[stack.length - 1];
    } else if (c === 0x2c /* , */ && top !== undefined) {
      if (top.names === null) top.segment = (top.segment as number) + 1;
      else top.expectName = true;
    }
    i++;
  }
  return undefined;
}

/** Adds `name` to the frame's names; false when it was there already. */
function remember(frame: Frame, name: string): boolean {
  const names = frame.names!;
  if (Array.isArray(names)) {
    if (names.includes(name)) return false;
    names.push(name);
    if (names.length > LINEAR_LIMIT) frame.names = new Set(names);
    return true;
  }
  if (names.has(name)) return false;
  names.add(name);
  return true;
}

/** RFC 6901 JSON Pointer of a path, under `root` (e.g. `/body`). */
export function jsonPointer(root: string, path: readonly (string | number)[]): string {
  return root + path.map((s) => `/${String(s).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}
