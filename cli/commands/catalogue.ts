import { Argument, Command } from "commander";
import { addCatalogueFilters, type CatalogueFilters } from "../catalogue-filters.ts";
import { unwrap } from "../client.ts";
import { actionCommand } from "../context.ts";
import { networkColumns, productColumns, serviceColumns } from "../views.ts";
import { catalogueSyncCommand } from "./catalogue/sync.ts";

export const catalogueCommand = (): Command => listCommand().addCommand(catalogueSyncCommand());

const listCommand = (): Command =>
  actionCommand(
    addCatalogueFilters(
      new Command("catalogue")
        .description("Networks (with discos and billers), services, or products of the live catalogue")
        .addArgument(new Argument("[what]", "what to list").choices(["networks", "services", "products"]).default("products")),
      "products of this network, disco or biller",
      "networks or products of this service",
    ),
    [
      "vendctl catalogue networks --service electricity",
      "vendctl catalogue products --network mtn --service data",
      "vendctl catalogue sync --provider vtu",
    ],
    async (ctx, what: "networks" | "services" | "products", flags: CatalogueFilters) => {
      const client = ctx.clients.api();
      if (what === "services") return ctx.printer.listAll(serviceColumns, await unwrap(client.GET("/api/v1/catalogue/services")));
      if (what === "networks") {
        const query = { service: flags.service };
        return ctx.printer.listAll(networkColumns, await unwrap(client.GET("/api/v1/catalogue/networks", { params: { query } })));
      }
      const query = { network: flags.network, service: flags.service };
      await ctx.printer.listAll(productColumns, await unwrap(client.GET("/api/v1/catalogue/products", { params: { query } })));
    },
  );
