import type { AppDeps } from "../deps.ts";
import { contextOf } from "../http/context.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { transitionsAfterCommit } from "../metrics/after-commit.ts";
import { resolveTransaction } from "../orders/resolve.ts";
import { stuckCutoff } from "../orders/statements/raise-stuck.ts";
import { readAfterWait, waitBudgetMs } from "../orders/waiters.ts";
import { adminGetTransaction, adminListTransactions, getTransactionByReference, listTransactions } from "./lookup.ts";
import { marginReport } from "./margin.ts";
import { settlementReport } from "./settlement.ts";

export function transactionRoutes(deps: AppDeps) {
  const handlers = {
    listTransactions: async (input) => ({
      status: 200,
      data: await listTransactions(deps.db, deps.cursors, principalOf(input), input.query),
    }),
    getTransaction: async (input) => {
      const scope = principalOf(input);
      const read = () => getTransactionByReference(deps.db, scope, input.params.reference);
      const budget = waitBudgetMs(input.query.wait ?? 0, deps.config, contextOf(input.request).startedAt);
      return { status: 200, data: await readAfterWait(deps.waiters, input.params.reference, budget, read) };
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
    resolveTransaction: async ({ params, body, db, afterCommit }) => {
      const metrics = transitionsAfterCommit(deps.metrics, afterCommit);
      const { before, after } = await resolveTransaction({ db, metrics }, params.reference, body);
      return { status: 200, message: `Resolved as ${body.status}`, data: after, audit: { before } };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
