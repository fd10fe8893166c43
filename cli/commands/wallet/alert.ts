import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { type Context, commandGroup, contextOf, withExample } from "../../context.ts";
import { parseNgn } from "../../money.ts";
import { walletColumns } from "../../views.ts";

async function setThreshold(ctx: Context, thresholdKobo: number | null): Promise<void> {
  const wallet = await unwrap(ctx.clients.api().PATCH("/api/v1/wallet", { body: { low_balance_threshold_kobo: thresholdKobo } }));
  await ctx.printer.record(wallet, walletColumns);
}

const alertSetCommand = (): Command =>
  withExample(
    new Command("set")
      .description(
        "Send wallet.balance_low once each time the available balance falls below this amount; " +
          "re-armed when it is back at or above. Alerts at once when the available balance is already below.",
      )
      .argument("<amount>", "threshold in NGN, e.g. 5000 or 5000.50"),
    "vendctl wallet alert set 5000",
  ).action(async (amount: string, _flags: unknown, command: Command) => {
    await setThreshold(contextOf(command), parseNgn(amount, "AMOUNT"));
  });

const alertOffCommand = (): Command =>
  withExample(new Command("off").description("Turn the low-balance alert off"), "vendctl wallet alert off").action(
    async (_flags: unknown, command: Command) => {
      await setThreshold(contextOf(command), null);
    },
  );

export const walletAlertCommand = (): Command =>
  commandGroup(
    new Command("alert").description(
      "The low-balance alert of the API key's wallet (PATCH /api/v1/wallet); wallet balance shows it",
    ),
    [alertSetCommand(), alertOffCommand()],
    "vendctl wallet alert set 5000",
    "vendctl wallet alert off",
  );
