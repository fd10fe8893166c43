import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { OperationsConfig } from "../config.ts";

export type { SpanExporter };

export type SpanKindName = "server" | "client" | "internal";

export interface SpanOptions {
  kind?: SpanKindName;
  /** A W3C traceparent to continue. Absent: the active span's trace, if any. Null or unreadable: a new trace. */
  parent?: string | null;
  attributes?: Attributes;
  /** Traceparents of spans this one is about without being their child (a batch's members). */
  links?: readonly string[];
}

export interface TraceSpan {
  /** This span's W3C traceparent, to store or send on; undefined when tracing is off. */
  readonly traceparent: string | undefined;
  setAttributes(attributes: Attributes): void;
  /** Names the span once what it is for is known (a request's route). */
  updateName(name: string): void;
  /** Marks the span failed (a 5xx, an exception, no answer). */
  fail(message?: string): void;
  end(): void;
  /** Runs `fn` with this span active: spans started inside without a parent (a provider call) are its children. */
  run<T>(fn: () => T): T;
}

/** Spans for requests, jobs and outgoing calls, held in the dependency bag (`deps.tracing`). */
export interface Tracing {
  readonly enabled: boolean;
  startSpan(name: string, options?: SpanOptions): TraceSpan;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

const kinds: Record<SpanKindName, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL };
const propagator = new W3CTraceContextPropagator();

/**
 * The span code runs under, for calls deep in the domain (a provider's HTTP call) that hold no `Tracing`:
 * a span's `run` sets it. Nothing is stored while tracing is off.
 */
const active = new AsyncLocalStorage<{ tracer: Tracer; context: Context }>();

const noopSpan: TraceSpan = {
  traceparent: undefined,
  setAttributes() {},
  updateName() {},
  fail() {},
  end() {},
  run: (fn) => fn(),
};

/** Tracing off: every span is the same no-op. */
export const tracingOff: Tracing = {
  enabled: false,
  startSpan: () => noopSpan,
  shutdown: async () => {},
};

function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, "0")}`;
}

function contextFrom(traceparent: string): Context {
  return propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

function linkTo(traceparent: string): Link | undefined {
  const context = trace.getSpanContext(contextFrom(traceparent));
  return context ? { context } : undefined;
}

function wrap(tracer: Tracer, span: Span): TraceSpan {
  return {
    traceparent: traceparentOf(span),
    setAttributes: (attributes) => span.setAttributes(attributes),
    updateName: (name) => span.updateName(name),
    fail: (message) => span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) }),
    end: () => span.end(),
    run: (fn) => active.run({ tracer, context: trace.setSpan(ROOT_CONTEXT, span) }, fn),
  };
}

function begin(tracer: Tracer, name: string, options: SpanOptions, current: Context | undefined): TraceSpan {
  const parent =
    options.parent === undefined ? (current ?? ROOT_CONTEXT) : options.parent ? contextFrom(options.parent) : ROOT_CONTEXT;
  const links = (options.links ?? []).map(linkTo).filter((link): link is Link => link !== undefined);
  const span = tracer.startSpan(
    name,
    { kind: kinds[options.kind ?? "internal"], ...(options.attributes ? { attributes: options.attributes } : {}), links },
    parent,
  );
  return wrap(tracer, span);
}

/**
 * Tracing as configured: off (a no-op costing nothing) unless `otlpEndpoint` is set; then spans are
 * batched to that OTLP/HTTP endpoint, or, when a test passes `exporter`, handed to it one by one.
 */
export function createTracing(config: Pick<OperationsConfig, "otlpEndpoint" | "serviceName">, exporter?: SpanExporter): Tracing {
  if (!config.otlpEndpoint) return tracingOff;
  const processor = exporter
    ? new SimpleSpanProcessor(exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: config.otlpEndpoint }));
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer("vend-service");
  return {
    enabled: true,
    startSpan: (name, options = {}) => begin(tracer, name, options, active.getStore()?.context),
    shutdown: () => provider.shutdown(),
  };
}

/** A child of the active span (see `TraceSpan.run`); undefined when no span is active. */
export function startChildSpan(name: string, options: Omit<SpanOptions, "parent"> = {}): TraceSpan | undefined {
  const store = active.getStore();
  return store ? begin(store.tracer, name, options, store.context) : undefined;
}

/** The active span's traceparent; undefined when no span is active. */
export function currentTraceparent(): string | undefined {
  const span = trace.getSpan(active.getStore()?.context ?? ROOT_CONTEXT);
  return span ? traceparentOf(span) : undefined;
}
