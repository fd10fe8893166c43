import { Elysia } from "elysia";
import { adminRoutes } from "./admin/routes.ts";
import { keyRoutes } from "./auth/routes.ts";
import { callbackRoutes } from "./callbacks/routes.ts";
import { catalogueRoutes } from "./catalogue/routes.ts";
import type { AppDeps } from "./deps.ts";
import { AppError } from "./errors.ts";
import { type Handlers, operationRoutes } from "./http/operations.ts";
import { errorResponse, logResponse } from "./http/respond.ts";
import { operationsForPath } from "./http/spec.ts";
import { providerAdminRoutes } from "./provider-admin/routes.ts";
import { requestLogRoutes } from "./request-logs/routes.ts";
import { systemRoutes } from "./system/routes.ts";
import { transactionRoutes } from "./transactions/routes.ts";
import { vendRoutes } from "./vend/routes.ts";
import { verificationRoutes } from "./verification/routes.ts";
import { walletRoutes } from "./wallet/routes.ts";
import { webhookRoutes } from "./webhooks/routes.ts";

function routeNotFound(deps: AppDeps, request: Request): AppError {
  const pathname = new URL(request.url).pathname;
  const allowed = operationsForPath(deps.spec, pathname).map((op) => op.method);
  if (allowed.length > 0) {
    return new AppError("METHOD_NOT_ALLOWED", `${request.method} is not allowed on ${pathname}`, null, {
      allow: [...new Set(allowed)].join(", "),
    });
  }
  return new AppError("NOT_FOUND", `No route for ${request.method} ${pathname}`);
}

/** The root Elysia app: every operation's handler plus the envelope for everything the router itself rejects. Never listens. */
export function buildApp(deps: AppDeps) {
  // Every operation of openapi.yaml, each handled by its feature (a missing one fails type checking).
  const handlers: Handlers = {
    ...systemRoutes(deps),
    ...adminRoutes(deps),
    ...providerAdminRoutes(deps),
    ...catalogueRoutes(deps),
    ...verificationRoutes(deps),
    ...transactionRoutes(deps),
    ...walletRoutes(deps),
    ...vendRoutes(deps),
    ...webhookRoutes(deps),
    ...keyRoutes(deps),
    ...callbackRoutes(deps),
    ...requestLogRoutes(deps),
  };
  const app = new Elysia().onError(({ code, error, request }) => {
    const mapped =
      code === "NOT_FOUND"
        ? routeNotFound(deps, request)
        : code === "PARSE"
          ? new AppError("VALIDATION_FAILED", "Malformed request body", {
              errors: [{ field: "body", message: "could not be parsed" }],
            })
          : error;
    const response = errorResponse(request, mapped, deps.logger);
    logResponse(deps, request, response, "(unmatched)");
    return response;
  });
  return app.use(operationRoutes(deps, handlers));
}

export type App = ReturnType<typeof buildApp>;
