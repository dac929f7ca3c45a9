/**
 * Query parameters (CONTRACT §3): a repeated parameter is refused, unknown ones are ignored. Only
 * the parameter an endpoint reads is decoded, so a malformed unknown parameter is ignored like any
 * unknown one; `+` decodes to a space, as in HTML forms.
 * @module
 */
import { accept, type Result, refuse } from "../result.js";
import { ApiError, type ErrorCode } from "./errors.js";

/**
 * The error of a query parameter, with its JSON pointer (`/query/<name>`).
 * @example queryError("invalid_amount", "amount", "amount must be greater than zero");
 */
export function queryError(
  code: Extract<ErrorCode, "invalid_parameter" | "invalid_amount" | "invalid_address">,
  name: string,
  detail: string,
): ApiError {
  return new ApiError(code, detail, { errors: [{ pointer: `/query/${name}`, detail }] });
}

/**
 * The decoded value of the parameter `name`, or undefined when absent.
 * @throws ApiError `invalid_parameter` when it is given more than once or badly percent-encoded.
 * @example queryParam("amount=1.5&x=%zz", "amount"); // "1.5"
 */
export function queryParam(query: string | undefined, name: string): string | undefined {
  if (query === undefined || query === "") return undefined;
  let raw: string | undefined;
  let count = 0;
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const decodedName = decodeComponent(eq === -1 ? part : part.slice(0, eq));
    // an undecodable name is no parameter we read
    if (!decodedName.ok || decodedName.value !== name) continue;
    count++;
    raw ??= eq === -1 ? "" : part.slice(eq + 1);
  }
  if (raw === undefined) return undefined;
  if (count > 1) throw queryError("invalid_parameter", name, `${name} is given ${count} times; give it once`);
  const value = decodeComponent(raw);
  if (!value.ok) throw queryError("invalid_parameter", name, `${name} has a malformed percent-encoding`);
  return value.value;
}

/** Percent-decoding with `+` as space (form encoding). Text with neither `%` nor `+` is already decoded. */
function decodeComponent(text: string): Result<string, "malformed_percent_encoding"> {
  if (!text.includes("%") && !text.includes("+")) return accept(text);
  try {
    return accept(decodeURIComponent(text.replaceAll("+", " ")));
  } catch {
    return refuse("malformed_percent_encoding", "malformed percent-encoding");
  }
}
