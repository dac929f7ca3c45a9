/**
 * The first request of every run: the calling partner's product list, which checks and
 * properties choose their products from (never hard-coded slugs). A refused key, an unreachable
 * target or a product list not found (a wrong base URL or base path) is a configuration error
 * (exit 2): nothing after it could be trusted.
 * @module
 */
import {
  type Discovery,
  isRecord,
  type ListedProduct,
  PRODUCTS_PATH,
  problemCode,
} from "./checks/context.js";
import { ConfigError, DEFAULTS } from "./config.js";
import { DEFAULT_API_BASE_PATH, type HttpClient } from "./http/client.js";

/** GET the product list once: checks choose their products from it (never hard-coded slugs). */
export async function discover(
  client: HttpClient,
  settings: {
    readonly baseUrl: string;
    readonly apiKey: string;
    readonly apiKeySource: string;
    readonly timeoutMs?: number | undefined;
  },
): Promise<Discovery> {
  const exchange = await client.send("DISCOVERY", {
    method: "GET",
    path: PRODUCTS_PATH,
    headers: { "X-Api-Key": settings.apiKey },
  });
  if (exchange.response === undefined) {
    throw new ConfigError(
      `the target ${settings.baseUrl} is unreachable (GET ${exchange.request.url}, --timeout ${settings.timeoutMs ?? DEFAULTS.timeoutMs} ms): ${exchange.error ?? "no response"}`,
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
    const code = problemCode(exchange);
    throw new ConfigError(
      `GET ${exchange.request.url} answered 404${code ? ` ${code}` : ""}: the API is not there. ` +
        notFoundHint(settings.baseUrl, client.apiBasePath) +
        ` (Or the target answers a refused API key with 404: check ${source}.)`,
    );
  }
  if (status !== 200)
    return { exchange, products: undefined, reason: `GET ${exchange.request.url} answered ${status}` };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { exchange, products: undefined, reason: `GET ${exchange.request.url} did not answer JSON` };
  }
  const data = isRecord(body) ? body["data"] : undefined;
  if (isRecord(body) && body["success"] === false)
    throw new ConfigError(
      `the target answered the product list with "success": false (HTTP ${status}): check ${source} and the base URL`,
    );
  if (!Array.isArray(data))
    return { exchange, products: undefined, reason: `GET ${exchange.request.url} has no data array` };
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

/**
 * How `--base-url` and `--base-path` combine, and which of them to change, for the message when
 * the product list is not found.
 */
function notFoundHint(baseUrl: string, apiBasePath: string): string {
  const mount = new URL(baseUrl).pathname.replace(/\/+$/, "");
  const rule =
    "--base-url is where the API is mounted: https://host/yield/v1 when a framework or gateway mounts " +
    "it there (its product list is then https://host/yield/v1/products), or a server root " +
    `(https://host), where the API answers under ${DEFAULT_API_BASE_PATH} as interface.md shows. ` +
    `--base-path is the API's own base path under --base-url, now ${JSON.stringify(apiBasePath)}`;
  if (apiBasePath !== "" && mount.endsWith(apiBasePath))
    return `${rule}. --base-url already ends with ${apiBasePath}, which --base-path adds again: leave one of them out.`;
  if (mount === "")
    return `${rule}: put the API's mount path in --base-url (https://host/yield/v1), or give --base-path ("" or /v1/partner for another basePath).`;
  return `${rule}: when the API's own base path follows the mount path, give it (--base-path ${DEFAULT_API_BASE_PATH}, or /v1/partner).`;
}
