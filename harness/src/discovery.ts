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
    /** The API's own base path (`--base-path`), for the message when the product list is not found. */
    readonly apiBasePath?: string | undefined;
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
    const basePath = settings.apiBasePath ?? DEFAULT_API_BASE_PATH;
    const doubled =
      basePath !== "" && new URL(settings.baseUrl).pathname.replace(/\/+$/, "").endsWith(basePath)
        ? ` --base-url already ends with ${basePath}, which the harness adds itself: leave it out of --base-url.`
        : "";
    throw new ConfigError(
      `GET ${exchange.request.url} answered 404${problemCode(exchange) ? ` ${problemCode(exchange)}` : ""}: ` +
        `the API is not there. --base-url is where the deployment is mounted (https://host, or https://host/yield/v1 ` +
        `behind a mount path) and --base-path the API's own base path under it (now ${JSON.stringify(settings.apiBasePath ?? DEFAULT_API_BASE_PATH)}; ` +
        `"" or /v1/partner for another basePath), so the products are at <base-url><base-path>/products ` +
        `(or the target answers a refused API key with 404: check ${source}).${doubled}`,
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
