import type { AppDeps } from "../deps.ts";
import { contextOf } from "../http/context.ts";
import { type Handlers, preparedHandler, principalOf } from "../http/operations.ts";
import { transitionsAfterCommit } from "../metrics/after-commit.ts";
import { adminGetTransaction, adminListTransactions, listTransactions } from "../orders/lookup.ts";
import { applyProviderAnswer, askProvider } from "../orders/operator-requery.ts";
import { resolveTransaction } from "../orders/resolve.ts";
import { stuckCutoff } from "../orders/statements/raise-stuck.ts";
import { presentAdminTransaction, providerAttemptsOf } from "../orders/view.ts";
import { getTransactionAfterWait } from "../orders/waiters.ts";
import { marginReport } from "./margin.ts";
import { settlementReport } from "./settlement.ts";

/** What the transaction routes use. */
export type TransactionRouteDeps = Pick<
  AppDeps,
  "caches" | "config" | "cursors" | "db" | "metrics" | "providers" | "reads" | "waiters"
>;

export function transactionRoutes(deps: TransactionRouteDeps) {
  const handlers = {
    listTransactions: async (input) => ({
      status: 200,
      data: await listTransactions(deps.db, deps.cursors, principalOf(input), input.query),
    }),
    getTransaction: async (input) => {
      const { reference } = input.params;
      const startedAt = contextOf(input.request).startedAt;
      const wait = { scope: principalOf(input), reference, waitSeconds: input.query.wait ?? 0, startedAt };
      return { status: 200, data: await getTransactionAfterWait({ ctx: deps, input: wait }) };
    },
    adminListTransactions: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => adminListTransactions(db, deps.cursors, query, stuckCutoff(deps.config))),
    }),
    adminGetTransaction: async ({ params }) => ({
      status: 200,
      data: await deps.reads.read((db) => adminGetTransaction(db, params.reference)),
    }),
    settlementReport: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => settlementReport(db, query)),
    }),
    marginReport: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => marginReport(db, query)),
    }),
    // An operator acting on an order: a re-query asks its provider before the change's transaction opens and applies
    // the answer in it; a resolution completes it as the operator says.
    requeryTransaction: preparedHandler(
      ({ params }) => askProvider(deps, params.reference),
      async ({ db, afterCommit }, answer) => {
        const row = await applyProviderAnswer(db, transitionsAfterCommit(deps.metrics, afterCommit), answer);
        return { status: 200, data: presentAdminTransaction(row, await providerAttemptsOf(db, row.id)) };
      },
    ),
    resolveTransaction: async ({ params, body, db, afterCommit }) => {
      const metrics = transitionsAfterCommit(deps.metrics, afterCommit);
      const { before, after } = await resolveTransaction({ db, metrics }, params.reference, body);
      return { status: 200, message: `Resolved as ${body.status}`, data: after, audit: { before } };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
