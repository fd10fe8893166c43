import { Command, Option } from "commander";
import { unwrap } from "../client.ts";
import { contextOf, withExample } from "../context.ts";
import { pricingColumns } from "../views.ts";

const services = ["airtime", "data", "cable", "electricity"] as const;

interface PricingFlags {
  network?: string;
  service?: (typeof services)[number];
}

export const pricingCommand = withExample(
  new Command("pricing")
    .description("What the wallet pays per product: bundle prices, and discounts on range products")
    .option("--network <code>", "only this network, disco or biller")
    .addOption(new Option("--service <service>", "only this service").choices(services)),
  "vendctl pricing --network mtn --service airtime",
).action(async (flags: PricingFlags, command: Command) => {
  const ctx = contextOf(command);
  const query = { network: flags.network, service: flags.service };
  const list = ctx.printer.list(pricingColumns);
  await list.rows(await unwrap(ctx.clients.api().GET("/api/v1/pricing", { params: { query } })));
  await list.end();
});
