/**
 * The JSON step of CONTRACT §5: the body is UTF-8 (strictly: no replacement characters), parses as
 * JSON, and names no member twice in one object (docs/contract.md, Events: parsers disagree on
 * which value of a repeated name wins, so the event we store could be another one downstream).
 * @module
 */
import { findDuplicateMember, jsonPointer } from "../../encoding/duplicate-members.js";
import { ApiError } from "../errors.js";

/** The body as text (what the store keeps, CONTRACT §5) and as parsed. */
export interface JsonBody {
  readonly text: string;
  readonly value: unknown;
}

// `fatal`: invalid UTF-8 is an error, not U+FFFD; a decoder without `stream` keeps no state between calls.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * @throws ApiError `invalid_json` (400) when the body is not UTF-8 JSON, or repeats a member name in
 * one object (the first repeated one named by its JSON Pointer under `/body`).
 */
export function parseJsonBody(body: Uint8Array): JsonBody {
  let text: string;
  let value: unknown;
  try {
    text = utf8.decode(body);
    value = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", "the request body is not valid UTF-8 JSON");
  }
  const duplicate = findDuplicateMember(text);
  if (duplicate !== undefined) {
    const pointer = jsonPointer("/body", duplicate);
    const shown = pointer.length > 200 ? `${pointer.slice(0, 200)}…` : pointer;
    throw new ApiError(
      "invalid_json",
      `the member ${shown} appears twice in one object; each name may appear once (parsers disagree on which value wins)`,
      { errors: [{ pointer, detail: "duplicate member name" }] },
    );
  }
  return { text, value };
}
