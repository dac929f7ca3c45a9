/**
 * The first request of every run: the calling partner's product list, which checks and
 * properties choose their products from (never hard-coded slugs). A refused key, an unreachable
 * target or a base URL with a path is a configuration error (exit 2): nothing after it could be
 * trusted.
 * @module
 */
import {
  type Discovery,
  isRecord,
  type ListedProduct,
  PRODUCTS_PATH,
  problemCode,
} from "./checks/context.js";
import { ConfigError } from "./config.js";
import type { HttpClient } from "./http/client.js";

/** GET the product list once: checks choose their products from it (never hard-coded slugs). */
export async function discover(
  client: HttpClient,
  settings: { readonly baseUrl: string; readonly apiKey: string; readonly apiKeySource: string },
): Promise<Discovery> {
  const exchange = await client.send("DISCOVERY", {
    method: "GET",
    path: PRODUCTS_PATH,
    headers: { "X-Api-Key": settings.apiKey },
  });
  if (exchange.response === undefined) {
    throw new ConfigError(
      `the target ${settings.baseUrl} is unreachable: ${exchange.error ?? "no response"}`,
    );
  }
  const { status, text } = exchange.response;
  const source = settings.apiKeySource;
  if (status === 401 || status === 403) {
    const code = problemCode(exchange);
    throw new ConfigError(
      `the target refused the API key (HTTP ${status}${code ? ` ${code}` : ""}): check ${source} ` +
        "and that the key belongs to this environment",
    );
  }
  if (status === 404) {
    throw new ConfigError(
      `GET ${exchange.request.url} answered 404${problemCode(exchange) ? ` ${problemCode(exchange)}` : ""}: ` +
        "the base URL must be the server root, without /api/partner or another path " +
        `(or the target answers a refused API key with 404: check ${source})`,
    );
  }
  if (status !== 200)
    return { exchange, products: undefined, reason: `GET ${PRODUCTS_PATH} answered ${status}` };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { exchange, products: undefined, reason: `GET ${PRODUCTS_PATH} did not answer JSON` };
  }
  const data = isRecord(body) ? body["data"] : undefined;
  if (isRecord(body) && body["success"] === false)
    throw new ConfigError(
      `the target answered the product list with "success": false (HTTP ${status}): check ${source} and the base URL`,
    );
  if (!Array.isArray(data))
    return { exchange, products: undefined, reason: `GET ${PRODUCTS_PATH} has no data array` };
  const products = data.filter(isRecord).flatMap((raw): ListedProduct[] => {
    if (typeof raw["slug"] !== "string") return [];
    const metrics = raw["latest_metrics"];
    return [
      {
        slug: raw["slug"],
        status: typeof raw["status"] === "string" ? raw["status"] : undefined,
        assetDecimals: integerOrUndefined(raw["asset_decimals"]),
        assetSymbol: typeof raw["asset_symbol"] === "string" ? raw["asset_symbol"] : undefined,
        serviceFeeBps: integerOrUndefined(raw["service_fee_bps"]),
        partnerFeeBps: integerOrUndefined(raw["partner_fee_bps"]),
        metrics: metrics === null ? null : isRecord(metrics) ? metrics : undefined,
        raw,
      },
    ];
  });
  return { exchange, products, reason: undefined };
}

function integerOrUndefined(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) ? value : undefined;
}
