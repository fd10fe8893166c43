import type { AppDeps } from "../deps.ts";
import { type Handlers, operationRoutes } from "../http/operations.ts";

export function webhookRoutes(deps: AppDeps) {
  const handlers: Handlers = {};
  return { handlers, routes: operationRoutes("webhooks", deps, handlers) };
}
