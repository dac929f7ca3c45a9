/**
 * The Content-Type step of CONTRACT §5: `application/json`, optionally with `charset=utf-8`
 * (docs/contract.md: any case, the value optionally quoted, spaces or tabs around `;` and `=`,
 * whitespace around the whole). One regular expression, also published in the OpenAPI document.
 * @module
 */
import { ApiError } from "../errors.js";
import type { PlainRequest } from "../plain-request.js";

const SOURCE = String.raw`^\s*application/json[ \t]*(;[ \t]*charset[ \t]*=[ \t]*(utf-8|"utf-8")[ \t]*)?\s*$`;

/**
 * The media types accepted for an event, matched case-insensitively.
 * @example JSON_CONTENT_TYPE.test('Application/JSON; charset="UTF-8"'); // true
 */
export const JSON_CONTENT_TYPE: RegExp = new RegExp(SOURCE, "i");

/**
 * `JSON_CONTENT_TYPE` as a JSON Schema `pattern`, which takes no flags: each letter spelled in
 * both cases, so the document accepts exactly what the code does.
 * @example new RegExp(JSON_CONTENT_TYPE_PATTERN).test("APPLICATION/json"); // true
 */
export const JSON_CONTENT_TYPE_PATTERN: string = SOURCE.replace(/\\.|[a-z]/g, (match) =>
  match.length === 2 ? match : `[${match}${match.toUpperCase()}]`,
);

/**
 * @throws ApiError `unsupported_media_type` (415) for a missing or other Content-Type.
 */
export function requireJsonContentType(request: PlainRequest): void {
  const contentType = request.headers["content-type"];
  if (contentType === undefined || !JSON_CONTENT_TYPE.test(contentType)) {
    throw new ApiError("unsupported_media_type", "Content-Type must be application/json (charset utf-8)");
  }
}
