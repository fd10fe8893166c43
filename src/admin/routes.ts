import { createApiKey, listApiKeys, recordKeyEnd, revokeApiKey } from "../auth/api-key-records.ts";
import { knowChangedKey } from "../auth/credential-registry.ts";
import { hashApiKey } from "../auth/keys.ts";
import type { AppDeps } from "../deps.ts";
import { idempotentOperation } from "../http/idempotent.ts";
import { type Handlers, operatorOf } from "../http/operations.ts";
import { reconciliationReport } from "../ledger/reconcile.ts";
import { createAccount, getAccountDetail, listAccounts } from "../wallet/account-records.ts";
import { creditWallet } from "../wallet/wallet-balance.ts";
import { listAuditEntries } from "./audit-trail.ts";
import {
  createOperator,
  getOperator,
  listOperators,
  presentBootstrapOperator,
  recordOperatorRevoked,
  revokeOperator,
} from "./operators.ts";

/** What the admin routes use: the database and its read router, the key registry, idempotency. */
export type AdminRouteDeps = Pick<AppDeps, "credentialSync" | "credentials" | "cursors" | "db" | "reads" | "runIdempotent">;

export function adminRoutes(deps: AdminRouteDeps) {
  const handlers = {
    createAccount: async ({ body, db, afterCommit }) => {
      const created = await createAccount(db, body.name);
      afterCommit(() => {
        for (const key of created.keys) knowChangedKey(deps.credentials, { hash: hashApiKey(key.key), key });
      });
      const message = "Account created; store the keys now, they are not shown again";
      return { status: 201, message, data: created, audit: { target: { type: "account", id: created.account.id } } };
    },
    listAccounts: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => listAccounts(db, deps.cursors, query)),
    }),
    getAccount: async ({ params }) => ({
      status: 200,
      data: await deps.reads.read((db) => getAccountDetail(db, params.account_id)),
    }),
    createApiKey: async ({ params, body, db, afterCommit }) => {
      const created = await createApiKey(db, params.account_id, body.mode, {
        expiresAt: body.expires_at,
        allowedIps: body.allowed_ips,
      });
      afterCommit(() => knowChangedKey(deps.credentials, { hash: hashApiKey(created.key), key: created }));
      return { status: 201, message: "API key created; store it now, it is not shown again", data: created };
    },
    listApiKeys: async ({ params }) => ({
      status: 200,
      data: await deps.reads.read((db) => listApiKeys(db, params.account_id)),
    }),
    revokeApiKey: async ({ params, db, afterCommit }) => {
      const revoked = await revokeApiKey(db, params.key_id);
      const answer = { ...revoked.key };
      // Answered once every process refuses the key; the recorded instant is that moment.
      afterCommit(async (committed) => {
        knowChangedKey(deps.credentials, { hash: revoked.hash, key: revoked.key });
        await deps.credentialSync.inForce();
        if (revoked.revokedNow) Object.assign(answer, await recordKeyEnd(committed, params.key_id, "revokedAt"));
      });
      return { status: 200, message: "API key revoked", data: answer };
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
    reconcileWallets: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => reconciliationReport(db, query.account_id)),
    }),
    listOperators: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => listOperators(db, deps.cursors, query)),
    }),
    createOperator: async (input) => {
      const created = await createOperator(input.db, input.body, operatorOf(input).name);
      const message = "Operator created; store the token now, it is not shown again";
      return { status: 201, message, data: created, audit: { target: { type: "operator", id: created.operator.id ?? "" } } };
    },
    getCurrentOperator: async (input) => {
      const { operatorId, name } = operatorOf(input);
      return { status: 200, data: operatorId ? await getOperator(deps.db, operatorId) : presentBootstrapOperator(name) };
    },
    revokeOperator: async ({ params, db, afterCommit }) => {
      const { before, after } = await revokeOperator(db, params.operator_id);
      const answer = { ...after };
      // Answered once every process refuses the token; the recorded instant is that moment.
      afterCommit(async (committed) => {
        if (after.revoked_at) deps.credentials.knowOperatorRevoked(params.operator_id, Date.parse(after.revoked_at));
        await deps.credentialSync.inForce();
        if (before.revoked_at === null) Object.assign(answer, await recordOperatorRevoked(committed, params.operator_id));
      });
      return { status: 200, message: "Operator revoked", data: answer, audit: { before } };
    },
    listAuditEntries: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => listAuditEntries(db, deps.cursors, query)),
    }),
  } satisfies Partial<Handlers>;
  return handlers;
}
