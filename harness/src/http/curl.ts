/**
 * A curl command that reproduces a recorded request without printing a secret: API keys become
 * `$PARTNER_API_KEY` (or the variable that held them), and a valid signature is recomputed from
 * `$PARTNER_SIGNING_SECRET` with openssl, over the exact body bytes.
 * @module
 */

import type { Redactor } from "../redact.js";
import type { RecordedRequest } from "./client.js";
import { hmacHex } from "./signature.js";

export interface CurlOptions {
  readonly redactor: Redactor;
  /** The run's signing secret, to recognise valid signatures. */
  readonly signingSecret?: string | undefined;
  /** Bodies longer than this are described, not printed. Default 4096 bytes. */
  readonly maxBodyBytes?: number;
}

const HMAC_EXPRESSION = `printf %s "$body" | openssl dgst -sha256 -hmac "$PARTNER_SIGNING_SECRET" -r | cut -d' ' -f1`;
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Shell command lines reproducing `request` (POSIX sh; openssl for signatures).
 * @example toCurl(exchange.request, { redactor }); // "curl -sS -i 'http://…/api/partner/products' \\\n  -H \"X-Api-Key: $PARTNER_API_KEY\""
 */
export function toCurl(request: RecordedRequest, options: CurlOptions): string {
  const lines: string[] = [];
  const args: string[] = [];
  const maxBody = options.maxBodyBytes ?? 4096;
  const bodyText = request.body === undefined ? undefined : decodeBody(request.body);
  const bodyPrintable =
    request.body !== undefined &&
    bodyText !== undefined &&
    request.body.length <= maxBody &&
    !bodyText.includes("\0");

  if (request.method === "HEAD") args.push("-I");
  else if (request.method !== "GET" || request.body !== undefined) args.push("-X", request.method);
  args.push(singleQuote(request.url));

  const validSignature =
    options.signingSecret !== undefined && request.body !== undefined
      ? hmacHex(options.signingSecret, request.body)
      : undefined;
  for (const [name, value] of Object.entries(request.headers)) {
    args.push(
      "-H",
      headerArgument(name, value, options.redactor, bodyPrintable ? validSignature : undefined),
    );
  }
  if (request.body !== undefined) {
    if (bodyPrintable) {
      const text = bodyText!;
      lines.push(
        `body=${options.redactor.leaks(text) ? options.redactor.redact(doubleQuote(text)) : singleQuote(text)}`,
      );
      args.push("--data-binary", '"$body"');
    } else {
      lines.push(`# request body: ${request.body.length} bytes, not shown`);
      args.push("--data-binary", "@body.bin");
    }
  }
  lines.push(`curl -sS -i ${args.join(" ")}`);
  return lines.join("\n");
}

function headerArgument(
  name: string,
  value: string,
  redactor: Redactor,
  validSignature: string | undefined,
): string {
  if (redactor.leaks(value)) return redactor.redact(doubleQuote(`${name}: ${value}`));
  if (validSignature !== undefined && name.toLowerCase() === "x-partner-signature") {
    if (value === validSignature) return `"${name}: $(${HMAC_EXPRESSION})"`;
    if (value === validSignature.toUpperCase()) return `"${name}: $(${HMAC_EXPRESSION} | tr a-f A-F)"`;
    if (value === `sha256=${validSignature}`) return `"${name}: sha256=$(${HMAC_EXPRESSION})"`;
  }
  return singleQuote(`${name}: ${value}`);
}

function decodeBody(body: Uint8Array): string | undefined {
  try {
    return decoder.decode(body);
  } catch {
    return undefined;
  }
}

/** POSIX single quoting: 'it'\''s'. */
export function singleQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** POSIX double quoting, for text in which placeholders such as $PARTNER_API_KEY must expand. */
function doubleQuote(text: string): string {
  return `"${text.replace(/[\\"$`]/g, (c) => `\\${c}`)}"`;
}
