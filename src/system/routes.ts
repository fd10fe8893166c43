import { hasActiveOperator } from "../admin/operators.ts";
import type { AppDeps } from "../deps.ts";
import { AppError } from "../errors.ts";
import { CompressedAsset } from "../http/compressed-asset.ts";
import type { Handlers, OperationInput } from "../http/operations.ts";
import { checkScrapeAccess } from "../metrics/access.ts";
import { renderDocsPage, scalarBundlePath } from "./docs-page.ts";
import { specViewText } from "./spec-views.ts";

/** What the system routes use. */
export type SystemRouteDeps = Pick<AppDeps, "config" | "database" | "db" | "metrics" | "spec" | "waiters">;

/** A load balancer's probe must get its answer quickly, even while the database does not answer at all. */
const readinessTimeoutMs = 2000;
const retryLater = { "retry-after": "5" };

/** Kept an hour, then revalidated: the script's URL does not change when the installed renderer does. */
const scriptCacheControl = "public, max-age=3600, must-revalidate";
/** Pages and documents are revalidated at each use (a `304` while unchanged): they change with the service. */
const documentCacheControl = "public, no-cache";

/** The reference pages, their documents and the renderer's script; each built and compressed on first request. */
function docsAssets(deps: SystemRouteDeps) {
  const { publicBaseUrl } = deps.config;
  const document = deps.spec.document;
  const html = (load: () => string) => new CompressedAsset(load, "text/html; charset=utf-8", documentCacheControl);
  const yaml = (load: () => string) => new CompressedAsset(load, "application/yaml; charset=utf-8", documentCacheControl);
  const info = document.info as { title: string };
  return {
    clientPage: html(() =>
      renderDocsPage({ specUrl: "/openapi.yaml?view=client", title: `${info.title} reference`, publicBaseUrl }),
    ),
    adminPage: html(() =>
      renderDocsPage({ specUrl: "/openapi.yaml?view=admin", title: `${info.title} operator reference`, publicBaseUrl }),
    ),
    spec: yaml(() => deps.spec.text),
    clientSpec: yaml(() => specViewText(document, "client")),
    adminSpec: yaml(() => specViewText(document, "admin")),
    script: new CompressedAsset(() => Bun.file(scalarBundlePath).bytes(), "text/javascript; charset=utf-8", scriptCacheControl),
  };
}

/**
 * The admin API is on, as authentication decides it: `ADMIN_TOKEN` is set, or an operator token can
 * authenticate. Off, its reference is `404` like the rest of it.
 */
async function requireAdminApi(deps: SystemRouteDeps): Promise<void> {
  if (deps.config.adminToken || (await hasActiveOperator(deps.db))) return;
  throw new AppError("NOT_FOUND", "Route not found");
}

export function systemRoutes(deps: SystemRouteDeps) {
  const docs = docsAssets(deps);
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
    getOpenApiDocument: async ({ query, request }) => {
      if (query.view === "admin") await requireAdminApi(deps);
      const asset = query.view === "client" ? docs.clientSpec : query.view === "admin" ? docs.adminSpec : docs.spec;
      return asset.answer(request);
    },
    getApiReference: async ({ request }) => docs.clientPage.answer(request),
    getAdminApiReference: async ({ request }) => {
      await requireAdminApi(deps);
      return docs.adminPage.answer(request);
    },
    getApiReferenceScript: async ({ request }) => docs.script.answer(request),
  } satisfies Partial<Handlers>;
  return handlers;
}
