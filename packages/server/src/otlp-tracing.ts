/**
 * The OpenTelemetry SDK behind `tracing.ts`: a tracer provider, the W3C Trace Context propagator,
 * an AsyncLocalStorage context manager (so store calls find their request's span) and an
 * exporter: OTLP over HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (`tracingFromEnvironment`),
 * or any exporter given (`startTracing`, e.g. an `InMemorySpanExporter` in a test). `partner-yield
 * serve` imports this module only when the variable is set, so a server without it never loads
 * the SDK.
 * @module
 */
import { context, type TextMapPropagator } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { settlesWithin } from "@partner-yield/node-adapter";
import { otlpEndpoint, type RequestTracing } from "./tracing.js";

/** Tracing set up, and how to end it: `shutdown()` exports the spans still buffered. */
export interface TracingSetup extends RequestTracing {
  /** Where spans go, as the banner says it (no credentials). */
  readonly description: string;
  /**
   * Exports the spans still buffered and stops; settles (never rejects) within `SHUTDOWN_MS`,
   * whether the collector answered or not: traces never hold up a shutdown.
   */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  readonly exporter: SpanExporter;
  /**
   * Spans are exported in batches, every `batchDelayMs` (default 5000) or 512 spans (default), off
   * the request path; `false` exports each span as it ends (tests).
   */
  readonly batch?: boolean | undefined;
  readonly batchDelayMs?: number | undefined;
  /** Default: `OTEL_SERVICE_NAME` (or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`), else `partner-yield`. */
  readonly serviceName?: string | undefined;
  readonly description?: string | undefined;
  /** Default: a request with a parent is sampled as its parent was, any other always. */
  readonly sampler?: Sampler | undefined;
}

/** Longest `shutdown()` waits for the last export. */
export const SHUTDOWN_MS = 3000;

/** How many setups use the context manager this module registered (it is process-wide). */
let contextUsers = 0;

/**
 * A tracer provider exporting to `options.exporter`, its tracer and the W3C propagator. Registers
 * an AsyncLocalStorage context manager when none is registered (only that: the provider and the
 * propagator are not made global).
 * @example
 * const exporter = new InMemorySpanExporter();
 * const tracing = startTracing({ exporter, batch: false });
 * const server = await startServer({ port: 0, tracing });
 */
export function startTracing(options: StartTracingOptions): TracingSetup {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": "partner-yield" }))
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(
      options.serviceName === undefined
        ? null
        : resourceFromAttributes({ "service.name": options.serviceName }),
    );
  const processor =
    options.batch === false
      ? new SimpleSpanProcessor({ exporter: options.exporter })
      : new BatchSpanProcessor({
          exporter: options.exporter,
          scheduledDelayMillis: options.batchDelayMs ?? 5000,
        });
  const provider = new TracerProvider({
    resource,
    spanProcessors: [processor],
    ...(options.sampler === undefined ? {} : { sampler: options.sampler }),
  });
  const ownsContext = useContextManager();
  const propagator: TextMapPropagator = new W3CTraceContextPropagator();
  let ended: Promise<void> | undefined;
  return {
    tracer: provider.getTracer("partner-yield"),
    propagator,
    description: options.description ?? "an exporter given in code",
    shutdown() {
      ended ??= settlesWithin(provider.shutdown(), SHUTDOWN_MS)
        .catch(() => false)
        .then(() => {
          if (ownsContext && --contextUsers === 0) context.disable();
        });
      return ended;
    },
  };
}

/** True when this setup counts on the context manager registered here. */
function useContextManager(): boolean {
  if (contextUsers > 0) {
    contextUsers++;
    return true;
  }
  const key = Symbol("partner-yield.context-probe");
  const probe = context.active().setValue(key, true);
  if (context.with(probe, () => context.active().getValue(key)) === true) return false; // someone else's
  if (!context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())) return false;
  contextUsers = 1;
  return true;
}

/**
 * OTLP/HTTP (JSON) tracing as the standard variables configure it: `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (spans go to its `/v1/traces`) or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (as is),
 * `OTEL_EXPORTER_OTLP_HEADERS` (read from `process.env`), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, and
 * `OTEL_BSP_SCHEDULE_DELAY` (ms between exports, default 5000), `OTEL_TRACES_SAMPLER` and
 * `OTEL_TRACES_SAMPLER_ARG` (e.g. `parentbased_traceidratio` and `0.1`); undefined when neither endpoint is
 * set or `OTEL_SDK_DISABLED=true`.
 * A failed export (collector down, refused) is one JSON line to `warn` (default stderr), at most
 * one a minute, naming the endpoint and the error.
 * @throws Error naming the variable when an endpoint is not an http(s) URL or the delay not a number.
 */
export function tracingFromEnvironment(
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = (line) => process.stderr.write(line),
): TracingSetup | undefined {
  const endpoint = otlpEndpoint(env);
  if (endpoint === undefined) return undefined;
  const name = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
    ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    : "OTEL_EXPORTER_OTLP_ENDPOINT";
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(
      `${name} must be an http(s) URL, e.g. http://127.0.0.1:4318 (unset it to turn traces off)`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(
      `${name} must be an http(s) URL, e.g. http://127.0.0.1:4318 (unset it to turn traces off)`,
    );
  }
  const delayText = env.OTEL_BSP_SCHEDULE_DELAY?.trim();
  const batchDelayMs = delayText ? Number(delayText) : undefined;
  if (batchDelayMs !== undefined && !(Number.isInteger(batchDelayMs) && batchDelayMs > 0)) {
    throw new Error("OTEL_BSP_SCHEDULE_DELAY must be a positive whole number of milliseconds");
  }
  // The exporter would read the same variables from process.env; `env` decides here.
  const traces =
    name === "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" ? url.href : `${url.href.replace(/\/+$/, "")}/v1/traces`;
  const where = `${new URL(traces).origin}${new URL(traces).pathname}`;
  return startTracing({
    exporter: reportingFailures(new OTLPTraceExporter({ url: traces }), where, warn),
    sampler: samplerFromEnvironment(env),
    batchDelayMs,
    description: `OTLP/HTTP to ${where}`,
  });
}

const SAMPLERS: Readonly<Record<string, (ratio: () => number) => Sampler>> = {
  always_on: () => new AlwaysOnSampler(),
  always_off: () => new AlwaysOffSampler(),
  traceidratio: (ratio) => new TraceIdRatioBasedSampler(ratio()),
  parentbased_always_on: () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
  parentbased_always_off: () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
  parentbased_traceidratio: (ratio) =>
    new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) }),
};

/**
 * The sampler `OTEL_TRACES_SAMPLER` names (default `parentbased_always_on`), its ratio from
 * `OTEL_TRACES_SAMPLER_ARG` (0 to 1, default 1).
 * @throws Error naming the variable and the values it takes.
 */
function samplerFromEnvironment(env: NodeJS.ProcessEnv): Sampler | undefined {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  if (!name) return undefined;
  const make = SAMPLERS[name];
  if (make === undefined) {
    throw new Error(
      `OTEL_TRACES_SAMPLER must be one of ${Object.keys(SAMPLERS).join(", ")}, not ${JSON.stringify(name)}`,
    );
  }
  return make(() => {
    const text = env.OTEL_TRACES_SAMPLER_ARG?.trim();
    const ratio = text ? Number(text) : 1;
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new Error(
        "OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of new traces sampled)",
      );
    }
    return ratio;
  });
}

/** Least time between two lines about failed exports. */
export const EXPORT_FAILURE_LOG_INTERVAL_MS = 60_000;

/**
 * `exporter`, telling `warn` when an export fails (its spans are lost: the SDK does not retry
 * them), at most once per `EXPORT_FAILURE_LOG_INTERVAL_MS`, with the spans lost since the last line.
 */
function reportingFailures(
  exporter: SpanExporter,
  where: string,
  warn: (line: string) => void,
): SpanExporter {
  let lastLine = Number.NEGATIVE_INFINITY;
  let lost = 0;
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) {
          lost += spans.length;
          const now = Date.now();
          if (now - lastLine >= EXPORT_FAILURE_LOG_INTERVAL_MS) {
            lastLine = now;
            const error =
              result.error === undefined ? "no reason given" : String(result.error.message).slice(0, 300);
            warn(
              `${JSON.stringify({ time: new Date(now).toISOString(), level: "warn", msg: "trace export failed", endpoint: where, error, spans_lost: lost })}\n`,
            );
            lost = 0;
          }
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
