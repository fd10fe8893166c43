import { createAccount, createApiKey, getAccountDetail, listAccounts, listApiKeys, revokeApiKey } from "../accounts/service.ts";
import type { AppDeps } from "../deps.ts";
import { idempotentOperation } from "../http/idempotent.ts";
import type { Handlers } from "../http/operations.ts";
import { reconciliationReport } from "../ledger/reconcile.ts";
import { evictEverywhere } from "../lib/caches.ts";
import { creditWallet } from "../wallet/service.ts";

export function adminRoutes(deps: AppDeps) {
  const handlers = {
    createAccount: async ({ body }) => ({
      status: 201,
      message: "Account created; store the keys now, they are not shown again",
      data: await createAccount(deps.db, body.name),
    }),
    listAccounts: async ({ query }) => ({ status: 200, data: await listAccounts(deps.db, deps.cursors, query) }),
    getAccount: async ({ params }) => ({ status: 200, data: await getAccountDetail(deps.db, params.account_id) }),
    createApiKey: async ({ params, body }) => ({
      status: 201,
      message: "API key created; store it now, it is not shown again",
      data: await createApiKey(deps.db, params.account_id, body.mode),
    }),
    listApiKeys: async ({ params }) => ({ status: 200, data: await listApiKeys(deps.db, params.account_id) }),
    revokeApiKey: async ({ params }) => {
      const revoked = await revokeApiKey(deps.db, params.key_id);
      await evictEverywhere(deps.database, deps.caches, "apiKeys", revoked.hash);
      return { status: 200, message: "API key revoked", data: revoked.key };
    },
    creditWallet: async (input) =>
      idempotentOperation<"creditWallet">(deps, input, "admin", async (tx) => ({
        status: 200,
        message: "Wallet credited",
        data: await creditWallet(
          tx,
          { accountId: input.params.account_id, mode: input.body.mode },
          { amountKobo: input.body.amount_kobo, kind: "credit", note: input.body.note },
        ),
      })),
    reconcileWallets: async ({ query }) => ({ status: 200, data: await reconciliationReport(deps.db, query.account_id) }),
  } satisfies Partial<Handlers>;
  return handlers;
}
