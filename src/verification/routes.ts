import type { AppDeps } from "../deps.ts";
import { type Handlers, operationRoutes } from "../http/operations.ts";

export function verificationRoutes(deps: AppDeps) {
  const handlers: Handlers = {};
  return { handlers, routes: operationRoutes("verification", deps, handlers) };
}
