/**
 * The JSON step of CONTRACT §5: the body is UTF-8 (strictly: no replacement characters) and
 * parses as JSON.
 * @module
 */
import { ApiError } from "../errors.js";

/** The body as text (what the store keeps, CONTRACT §5) and as parsed. */
export interface JsonBody {
  readonly text: string;
  readonly value: unknown;
}

// `fatal`: invalid UTF-8 is an error, not U+FFFD; a decoder without `stream` keeps no state between calls.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * @throws ApiError `invalid_json` (400) when the body is not UTF-8 JSON.
 */
export function parseJsonBody(body: Uint8Array): JsonBody {
  try {
    const text = utf8.decode(body);
    return { text, value: JSON.parse(text) };
  } catch {
    throw new ApiError("invalid_json", "the request body is not valid UTF-8 JSON");
  }
}
