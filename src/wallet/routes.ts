import type { AppDeps } from "../deps.ts";
import { AppError } from "../errors.ts";
import { accountScope, idempotentOperation } from "../http/idempotent.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { listLedgerEntries } from "./statement.ts";
import { creditWallet, getWallet, setLowBalanceThreshold } from "./wallet-balance.ts";

/** What the wallet routes use. */
export type WalletRouteDeps = Pick<AppDeps, "cursors" | "db" | "runIdempotent">;

export function walletRoutes(deps: WalletRouteDeps) {
  const handlers = {
    getWallet: async (input) => ({ status: 200, data: await getWallet(deps.db, principalOf(input)) }),
    updateWallet: async (input) => ({
      status: 200,
      message: input.body.low_balance_threshold_kobo === null ? "Low-balance alert off" : "Low-balance alert set",
      data: await setLowBalanceThreshold(deps.db, principalOf(input), input.body.low_balance_threshold_kobo),
    }),
    fundWallet: async (input) => {
      const principal = principalOf(input);
      if (principal.mode !== "test") {
        throw new AppError(
          "TEST_MODE_ONLY",
          "Only test wallets can be funded through the API; live wallets are credited by operators",
        );
      }
      return idempotentOperation<"fundWallet">(deps, input, accountScope(principal), async (tx) => ({
        status: 200,
        message: "Wallet funded",
        data: await creditWallet(tx, principal, { amountKobo: input.body.amount_kobo, kind: "fund", note: input.body.note }),
      }));
    },
    listLedgerEntries: async (input) => ({
      status: 200,
      data: await listLedgerEntries(deps.db, deps.cursors, principalOf(input), input.query),
    }),
  } satisfies Partial<Handlers>;
  return handlers;
}
