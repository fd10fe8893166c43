import { Command, Option } from "commander";
import { type Mode, modes } from "../../../generated/constants.ts";
import { formatNgn } from "../../../src/lib/shared/money.ts";
import { call } from "../../client.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { actionCommand, type Context, newIdempotencyKey } from "../../context.ts";
import { parseNgn } from "../../money.ts";
import { type Movement, movementColumns } from "../../views.ts";

interface FundFlags {
  account?: string;
  mode: Mode;
  note?: string;
  idempotencyKey?: string;
  yes?: boolean;
}

async function printMovement(ctx: Context, answer: { data: Movement; response: Response }): Promise<void> {
  if (answer.response.headers.get("idempotent-replayed") === "true") {
    await ctx.printer.note("Replayed: the answer stored for this Idempotency-Key (nothing credited twice)");
  }
  await ctx.printer.record(answer.data, movementColumns);
}

export const walletFundCommand = (): Command =>
  actionCommand(
    new Command("fund")
      .summary("Fund the test wallet, or any wallet with --account (admin)")
      .description(
        "Credit a wallet. With an API key: its test wallet (POST /api/v1/wallet/fund; live keys are refused). " +
          "With --account: any account's wallet in either mode through the admin API, with a note; a live credit asks " +
          "to confirm on a terminal and needs --yes without one.",
      )
      .argument("<amount>", "amount in NGN, e.g. 5000 or 5000.50")
      .option("--account <id>", "credit this account's wallet through the admin API (needs the admin token)")
      .addOption(new Option("--mode <mode>", "wallet mode with --account").choices(modes).default("test"))
      .option("--note <text>", 'ledger note (default with --account: "vendctl wallet fund")')
      .option("--idempotency-key <key>", "reuse the key of an earlier attempt; default: a new random key")
      .addOption(yesOption("for a live credit with --account")),
    [
      "vendctl wallet fund 5000",
      "vendctl wallet fund 250000 --account 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --mode live --note 'Bank transfer 88213' --yes",
    ],
    async (ctx, amount: string, flags: FundFlags) => {
      const amountKobo = parseNgn(amount, "AMOUNT");
      const client = flags.account ? ctx.clients.admin() : ctx.clients.api();
      // Test wallets hold play money: only a live credit moves money an account can spend on real orders.
      if (flags.account && flags.mode === "live") {
        await confirmDestructive(
          ctx,
          flags.yes,
          `Credit NGN ${formatNgn(amountKobo)} to the live wallet of account ${flags.account}`,
          "It can be spent on real orders at once",
        );
      }
      const key = flags.idempotencyKey ?? newIdempotencyKey();
      await ctx.printer.note(`Idempotency-Key: ${key}`);
      const header = { "Idempotency-Key": key };
      const answer = flags.account
        ? await call(
            client.POST("/admin/v1/accounts/{account_id}/wallet/credit", {
              params: { path: { account_id: flags.account }, header },
              body: { mode: flags.mode, amount_kobo: amountKobo, note: flags.note ?? "vendctl wallet fund" },
            }),
          )
        : await call(
            client.POST("/api/v1/wallet/fund", {
              params: { header },
              body: { amount_kobo: amountKobo, ...(flags.note ? { note: flags.note } : {}) },
            }),
          );
      await printMovement(ctx, answer);
    },
  );
