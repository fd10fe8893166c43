import type { AppDeps } from "../deps.ts";
import { type Handlers, operationRoutes } from "../http/operations.ts";

export function catalogueRoutes(deps: AppDeps) {
  const handlers: Handlers = {};
  return { handlers, routes: operationRoutes("catalogue", deps, handlers) };
}
