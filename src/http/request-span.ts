import type { Tracing } from "../tracing/tracing.ts";
import { contextOf } from "./context.ts";

/**
 * Answers the request inside a SERVER span named `METHOD route` (the operation's path template, once
 * routing has found it), continuing the client's W3C `traceparent` when it sends one. The span's
 * traceparent is kept on the request's context for what the request stores (an accepted vend).
 */
export function traceRequest(
  tracing: Tracing,
  request: Request,
  routeOf: (operationId: string) => string | undefined,
  handle: () => Response | Promise<Response>,
): Response | Promise<Response> {
  return tracing.enabled ? traced(tracing, request, routeOf, handle) : handle();
}

async function traced(
  tracing: Tracing,
  request: Request,
  routeOf: (operationId: string) => string | undefined,
  handle: () => Response | Promise<Response>,
): Promise<Response> {
  const context = contextOf(request);
  const method = request.method;
  const span = tracing.startSpan(method, {
    kind: "server",
    parent: request.headers.get("traceparent"),
    attributes: {
      "http.request.method": method,
      "url.path": new URL(request.url).pathname,
      "http.request.id": context.id,
    },
  });
  context.traceparent = span.traceparent;
  try {
    const response = await span.run(handle);
    const route = context.operationId ? routeOf(context.operationId) : undefined;
    if (route) span.setAttributes({ "http.route": route });
    span.updateName(route ? `${method} ${route}` : method);
    span.setAttributes({ "http.response.status_code": response.status });
    if (response.status >= 500) span.fail(`HTTP ${response.status}`);
    return response;
  } catch (error) {
    span.fail(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    span.end();
  }
}
