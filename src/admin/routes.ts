import { createAccount, listAccounts } from "../accounts/service.ts";
import type { AppDeps } from "../deps.ts";
import { type Handlers, operationRoutes } from "../http/operations.ts";

export function adminRoutes(deps: AppDeps) {
  const handlers: Handlers = {
    createAccount: async ({ body }) => ({
      status: 201,
      message: "Account created; store the keys now, they are not shown again",
      data: await createAccount(deps.db, body.name),
    }),
    listAccounts: async ({ query }) => ({ status: 200, data: await listAccounts(deps.db, deps.cursors, query) }),
  };
  return { handlers, routes: operationRoutes("admin", deps, handlers) };
}
