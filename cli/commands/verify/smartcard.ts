import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { billerOption } from "../../vend/options.ts";
import { smartcardColumns } from "../../views.ts";

interface SmartcardFlags {
  biller: string;
  smartcard: string;
}

export const verifySmartcardCommand = (): Command =>
  actionCommand(
    new Command("smartcard")
      .description("Look up the customer and current bouquet behind a smartcard (nothing is charged)")
      .addOption(billerOption().makeOptionMandatory())
      .requiredOption("--smartcard <number>", "smartcard or IUC number"),
    ["vendctl verify smartcard --biller dstv --smartcard 7031234567"],
    async (ctx, flags: SmartcardFlags) => {
      const body = { biller: flags.biller, smartcard_number: flags.smartcard };
      const found = await unwrap(ctx.clients.api().POST("/api/v1/bills/cable/verify", { body }));
      await ctx.printer.record(found, smartcardColumns);
    },
  );
