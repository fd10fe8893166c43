import { Command } from "commander";
import { addCatalogueFilters, type CatalogueFilters } from "../catalogue-filters.ts";
import { unwrap } from "../client.ts";
import { actionCommand } from "../context.ts";
import { pricingColumns } from "../views.ts";

export const pricingCommand = (): Command =>
  actionCommand(
    addCatalogueFilters(
      new Command("pricing").description("What the wallet pays per product: bundle prices, and discounts on range products"),
      "only this network, disco or biller",
      "only this service",
    ),
    ["vendctl pricing --network mtn --service airtime"],
    async (ctx, flags: CatalogueFilters) => {
      const query = { network: flags.network, service: flags.service };
      await ctx.printer.listAll(pricingColumns, await unwrap(ctx.clients.api().GET("/api/v1/pricing", { params: { query } })));
    },
  );
