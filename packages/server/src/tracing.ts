/**
 * OpenTelemetry traces of the API, through `@opentelemetry/api` only: a server span per request,
 * continuing the trace of an incoming W3C `traceparent` (and its `tracestate`), and a child span
 * for each store call that waits (a key, partner or product read that goes to PostgreSQL, the
 * event insert, the Redis limiter). Nothing here runs unless tracing is configured: without it
 * the server neither wraps its handler nor its stores, so a request costs what it did
 * (docs/performance.md). The SDK and the OTLP exporter are set up by `otlp-tracing.ts`, loaded
 * only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
 *
 * Attributes hold no secret: the route template, the status, the error code, the partner id,
 * the key id, the request id and the client address; never an API key, its hash, a signature, a
 * signing secret, a header, the path as sent (it may hold anything) or a body.
 * @module
 */
import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type {
  EventStore,
  KeyStore,
  PartnerApiHandler,
  PartnerStore,
  PlainRequest,
  PlainResponse,
  PositionSource,
  PriceSource,
  ProductSource,
  RateLimiter,
} from "@partner-yield/core";

/** What the server needs to trace: where spans go, and how a parent comes in with a request. */
export interface RequestTracing {
  /** E.g. `provider.getTracer("partner-yield")`. */
  readonly tracer: Tracer;
  /**
   * Reads the parent of a request's span from its headers; the W3C Trace Context one
   * (`W3CTraceContextPropagator` of `@opentelemetry/core`) reads `traceparent` and `tracestate`.
   */
  readonly propagator: TextMapPropagator;
}

/**
 * `handler` with a server span around each request: its parent is the context the propagator
 * reads from the request's headers (none: a new trace), it is the active span while the core
 * handles the request (so store calls become its children), and it ends when the answer is
 * ready, named `GET /products/{slug}` (the route) or the method alone when no route took it.
 * A 5xx, or a handler that fails, marks it as an error.
 * @throws Error when no context manager is registered: store spans could not find their request.
 * @example const traced = traceHandler(api, { tracer, propagator: new W3CTraceContextPropagator() });
 */
export function traceHandler(handler: PartnerApiHandler, tracing: RequestTracing): PartnerApiHandler {
  assertContextPropagates();
  const { tracer, propagator } = tracing;
  return {
    handle(request: PlainRequest): Promise<PlainResponse> {
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
      const attributes: Attributes = { "http.request.method": request.method };
      if (request.clientAddress !== undefined) attributes["client.address"] = request.clientAddress;
      const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent);
      let answer: Promise<PlainResponse>;
      try {
        answer = context.with(trace.setSpan(parent, span), () => handler.handle(request));
      } catch (error) {
        endFailed(span, error);
        throw error;
      }
      return answer.then(
        (response) => {
          endAnswered(span, request.method, response);
          return response;
        },
        (error: unknown) => {
          endFailed(span, error);
          throw error;
        },
      );
    },
  };
}

function endAnswered(span: Span, method: string, response: PlainResponse): void {
  // The core's outcome record (`ResponseOutcome`): read, never derived again here.
  const outcome = response;
  const attributes: Attributes = { "http.response.status_code": response.status };
  const requestId = response.headers["x-request-id"];
  if (requestId !== undefined) attributes["partner_yield.request_id"] = requestId;
  if (outcome.route !== undefined) {
    // `GET /products/{slug}`: the template (below the base path) is what follows the method.
    const space = outcome.route.indexOf(" ");
    attributes["http.route"] = space < 0 ? outcome.route : outcome.route.slice(space + 1);
    span.updateName(outcome.route);
  } else {
    span.updateName(method);
  }
  if (outcome.errorCode !== undefined) {
    attributes["partner_yield.error_code"] = outcome.errorCode;
    attributes["error.type"] = outcome.errorCode;
  }
  if (outcome.partnerId !== undefined) attributes["partner_yield.partner_id"] = outcome.partnerId;
  if (outcome.keyId !== undefined) attributes["partner_yield.key_id"] = outcome.keyId;
  if (outcome.environment !== undefined) attributes["partner_yield.environment"] = outcome.environment;
  span.setAttributes(attributes);
  // A 4xx is the client's doing: the span of a server is an error only for a 5xx (OTel's HTTP rules).
  if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

function endFailed(span: Span, error: unknown): void {
  // The error's name only: a message may quote a host, a query or a value sent.
  span.setAttribute("error.type", errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

function errorType(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/**
 * Store calls get spans only through the active context; without a context manager (none is
 * registered until an SDK or `otlp-tracing.ts` registers one) `context.with` runs its function
 * with nothing active, and every store span would start a trace of its own. Said at once.
 */
function assertContextPropagates(): void {
  const key = Symbol("partner-yield.tracing-probe");
  const probe = ROOT_CONTEXT.setValue(key, true);
  if (context.with(probe, () => context.active().getValue(key)) !== true) {
    throw new Error(
      "tracing needs an OpenTelemetry context manager: register one (AsyncLocalStorageContextManager of @opentelemetry/context-async-hooks) before starting the server, or use startTracing()",
    );
  }
}

/** The stores and sources the API reads and writes, as `createPartnerApi` takes them. */
export interface TracedPorts {
  keys?: KeyStore | undefined;
  partners?: PartnerStore | undefined;
  products?: ProductSource | undefined;
  positions?: PositionSource | undefined;
  prices?: PriceSource | undefined;
  events?: EventStore | undefined;
  rateLimiter?: RateLimiter | undefined;
}

/** Per port, the methods on the request path that get a span (when their answer is a promise). */
const TRACED_METHODS: { readonly [P in keyof TracedPorts]-?: readonly string[] } = {
  keys: ["findByHash"],
  partners: ["getPartner"],
  products: ["listProducts", "getProduct"],
  positions: ["getHolding"],
  prices: ["getUsdPriceWad"],
  events: ["append"],
  rateLimiter: ["hit", "peek"],
};

/**
 * `ports` with each store wrapped so that a call answering with a promise (it went to PostgreSQL,
 * Redis, a chain) gets a client span, a child of the active span, from the call to its answer,
 * named `keys.findByHash`, `events.append`, `rate_limiter.hit`, …. A call answering at once (an
 * in-memory store, a read-cache hit) gets none and stays synchronous: the core awaits only
 * promises (`MaybePromise`). Each store is wrapped in a Proxy: any other method or property is
 * the store's own, called on the store itself. No argument is recorded (a key's hash, a wallet).
 * @example const traced = tracePorts({ keys, events, rateLimiter }, tracer);
 */
export function tracePorts<T extends TracedPorts>(ports: T, tracer: Tracer): T {
  const traced: TracedPorts = { ...ports };
  for (const port of Object.keys(TRACED_METHODS) as (keyof TracedPorts)[]) {
    const store = ports[port];
    if (store !== undefined) {
      (traced as Record<string, unknown>)[port] = traceStore(store, port, TRACED_METHODS[port], tracer);
    }
  }
  return traced as T;
}

function traceStore<S extends object>(store: S, port: string, methods: readonly string[], tracer: Tracer): S {
  const name = port === "rateLimiter" ? "rate_limiter" : port;
  const base: Attributes = { "partner_yield.store": name };
  const system = dbSystem(store);
  if (system !== undefined) base["db.system.name"] = system;
  const wrapped = new Map<PropertyKey, unknown>();
  for (const method of methods) {
    const original = (store as Record<string, unknown>)[method];
    if (typeof original !== "function") continue;
    const call = original as (...args: unknown[]) => unknown;
    wrapped.set(method, tracedMethod(store, call, `${name}.${method}`, base, tracer));
  }
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      if (wrapped.has(property)) return wrapped.get(property);
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      // Called on the store itself: its private fields are not on the proxy.
      let fn = bound.get(property);
      if (fn === undefined) {
        fn = (value as (...args: unknown[]) => unknown).bind(target);
        bound.set(property, fn);
      }
      return fn;
    },
  });
}

function tracedMethod(
  store: object,
  original: (...args: unknown[]) => unknown,
  spanName: string,
  attributes: Attributes,
  tracer: Tracer,
): (...args: unknown[]) => unknown {
  return (...args: unknown[]) => {
    const startTime = performance.timeOrigin + performance.now();
    const answer = original.apply(store, args);
    if (typeof (answer as { then?: unknown } | null | undefined)?.then !== "function") return answer;
    const span = tracer.startSpan(
      spanName,
      { kind: SpanKind.CLIENT, startTime, attributes },
      context.active() as Context,
    );
    (answer as PromiseLike<unknown>).then(
      () => span.end(),
      (error: unknown) => endFailed(span, error),
    );
    return answer;
  };
}

/** The backend a store's class names, for `db.system.name`; undefined for the in-memory ones. */
function dbSystem(store: object): string | undefined {
  const name = store.constructor?.name ?? "";
  if (/postgres/i.test(name)) return "postgresql";
  if (/redis/i.test(name)) return "redis";
  return undefined;
}

/**
 * The OTLP endpoint the environment names for traces (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT`), or undefined when neither is set or `OTEL_SDK_DISABLED=true`:
 * then `partner-yield serve` does not load the SDK (`otlp-tracing.ts`).
 * @example if (otlpEndpoint(process.env) !== undefined) tracing = (await import("./otlp-tracing.js")).tracingFromEnvironment();
 */
export function otlpEndpoint(env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return endpoint === "" ? undefined : endpoint;
}
