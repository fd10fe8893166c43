import { Argument, Command, Option } from "commander";
import { unwrap } from "../client.ts";
import { contextOf, withExample } from "../context.ts";
import { networkColumns, productColumns, serviceColumns } from "../views.ts";

const services = ["airtime", "data", "cable", "electricity"] as const;

interface CatalogueFlags {
  network?: string;
  service?: (typeof services)[number];
}

export const catalogueCommand = withExample(
  new Command("catalogue")
    .description("Networks (with discos and billers), services, or products of the live catalogue")
    .addArgument(new Argument("[what]", "what to list").choices(["networks", "services", "products"]).default("products"))
    .option("--network <code>", "products of this network, disco or biller")
    .addOption(new Option("--service <service>", "networks or products of this service").choices(services)),
  "vendctl catalogue networks --service electricity",
  "vendctl catalogue products --network mtn --service data",
).action(async (what: "networks" | "services" | "products", flags: CatalogueFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.api();
  if (what === "services") {
    const list = ctx.printer.list(serviceColumns);
    await list.rows(await unwrap(client.GET("/api/v1/catalogue/services")));
    return list.end();
  }
  if (what === "networks") {
    const list = ctx.printer.list(networkColumns);
    await list.rows(await unwrap(client.GET("/api/v1/catalogue/networks", { params: { query: { service: flags.service } } })));
    return list.end();
  }
  const list = ctx.printer.list(productColumns);
  const query = { network: flags.network, service: flags.service };
  await list.rows(await unwrap(client.GET("/api/v1/catalogue/products", { params: { query } })));
  await list.end();
});
