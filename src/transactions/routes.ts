import type { AppDeps } from "../deps.ts";
import { type Handlers, operationRoutes } from "../http/operations.ts";

export function transactionRoutes(deps: AppDeps) {
  const handlers: Handlers = {};
  return { handlers, routes: operationRoutes("transactions", deps, handlers) };
}
