import { Command } from "commander";
import { addCatalogueFilters, type CatalogueFilters } from "../../catalogue-filters.ts";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import type { Column } from "../../output.ts";
import { type Product, productColumns } from "../../views.ts";

export const operatorProductColumns: Column<Product>[] = [
  ...productColumns,
  { key: "requested_mb", header: "MB" },
  { key: "validity_days", header: "DAYS" },
  { key: "meter_type" },
  { key: "active" },
  { key: "updated_at", header: "UPDATED" },
];

/** The products on sale now, with everything `products update` can change. */
export const productsListCommand = (): Command =>
  actionCommand(
    addCatalogueFilters(
      new Command("list").description(
        "Products on sale, with price, range, discount and whether active (API key: the catalogue; disabled products are not listed)",
      ),
      "only this network, disco or biller",
      "only this service",
    ),
    ["vendctl products list --service data --network mtn", "vendctl products list --csv > products.csv"],
    async (ctx, flags: CatalogueFilters) => {
      const query = { network: flags.network, service: flags.service };
      const products = await unwrap(ctx.clients.api().GET("/api/v1/catalogue/products", { params: { query } }));
      await ctx.printer.listAll(operatorProductColumns, products);
    },
  );
