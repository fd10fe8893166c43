import type { AppDeps } from "../deps.ts";
import { AppError } from "../errors.ts";
import type { Handlers, OperationInput } from "../http/operations.ts";
import { checkScrapeAccess } from "../metrics/access.ts";
import { renderDocsPage, scalarBundlePath } from "./docs-page.ts";

/** A load balancer's probe must get its answer quickly, even while the database does not answer at all. */
const readinessTimeoutMs = 2000;
const retryLater = { "retry-after": "5" };

export function systemRoutes(deps: AppDeps) {
  const docsPage = renderDocsPage(deps.config.publicBaseUrl);
  const handlers = {
    getHealth: async () => ({ status: 200, data: { status: "ok" } }),
    getReadiness: async () => {
      if (deps.waiters.draining) throw new AppError("SERVICE_UNAVAILABLE", "Shutting down", null, retryLater);
      try {
        await deps.database.probe(readinessTimeoutMs);
      } catch {
        throw new AppError("SERVICE_UNAVAILABLE", "Database is unreachable or cannot take writes", null, retryLater);
      }
      return { status: 200, data: { status: "ok", database: "ok" } };
    },
    getMetrics: async (input: OperationInput<"getMetrics">) => {
      const { metricsEnabled, metricsToken } = deps.config.operations;
      checkScrapeAccess({ enabled: metricsEnabled, token: metricsToken }, input.request.headers.get("authorization"));
      return { status: 200, raw: await deps.metrics.scrape(), contentType: deps.metrics.contentType };
    },
    getOpenApiDocument: async () => ({ status: 200, raw: deps.spec.text, contentType: "application/yaml; charset=utf-8" }),
    getApiReference: async () => ({ status: 200, raw: docsPage, contentType: "text/html; charset=utf-8" }),
    getApiReferenceScript: async () => ({
      status: 200,
      raw: Bun.file(scalarBundlePath),
      contentType: "text/javascript; charset=utf-8",
      headers: { "cache-control": "public, max-age=3600" },
    }),
  } satisfies Partial<Handlers>;
  return handlers;
}
