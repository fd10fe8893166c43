import type { AppDeps } from "../deps.ts";
import { type Handlers, operationRoutes, principalOf } from "../http/operations.ts";
import { adminGetTransaction, adminListTransactions, getTransactionByReference, listTransactions } from "./service.ts";

export function transactionRoutes(deps: AppDeps) {
  const handlers: Handlers = {
    listTransactions: async (input) => ({
      status: 200,
      data: await listTransactions(deps.db, deps.cursors, principalOf(input), input.query),
    }),
    // `wait` (long-poll) is accepted and not acted on yet.
    getTransaction: async (input) => ({
      status: 200,
      data: await getTransactionByReference(deps.db, principalOf(input), input.params.reference),
    }),
    adminListTransactions: async ({ query }) => ({
      status: 200,
      data: await adminListTransactions(deps.db, deps.cursors, query),
    }),
    adminGetTransaction: async ({ params }) => ({
      status: 200,
      data: await adminGetTransaction(deps.db, params.reference),
    }),
  };
  return { handlers, routes: operationRoutes("transactions", deps, handlers) };
}
