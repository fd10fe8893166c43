import { Command, Option } from "commander";
import { type MeterType, meterTypes } from "../../../generated/constants.ts";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { meterColumns } from "../../views.ts";

interface MeterFlags {
  disco: string;
  meter: string;
  meterType: MeterType;
}

export const verifyMeterCommand = (): Command =>
  actionCommand(
    new Command("meter")
      .description("Look up the customer behind a meter (nothing is charged)")
      .requiredOption("--disco <code>", "distribution company, e.g. ikedc")
      .requiredOption("--meter <number>", "meter number")
      .addOption(new Option("--meter-type <type>", "meter type").choices(meterTypes).default("prepaid")),
    ["vendctl verify meter --disco ikedc --meter 45031234567 --meter-type prepaid"],
    async (ctx, flags: MeterFlags) => {
      const body = { network: flags.disco, meter_number: flags.meter, meter_type: flags.meterType };
      const found = await unwrap(ctx.clients.api().POST("/api/v1/bills/electricity/verify", { body }));
      await ctx.printer.record(found, meterColumns);
    },
  );
