import { Command } from "commander";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { unwrap } from "../../client.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { actionCommand, type Context } from "../../context.ts";
import { UsageError } from "../../errors.ts";
import type { Column } from "../../output.ts";
import { operatorProductColumns } from "../products/list.ts";

type Schemas = components["schemas"];
type CatalogueSync = Schemas["CatalogueSync"];

interface SyncFlags {
  provider: string;
  dryRun?: boolean;
  yes?: boolean;
}

const priceColumns: Column<Schemas["CatalogueSyncPriceChange"]>[] = [
  { key: "product_code", header: "PRODUCT" },
  { key: "plan_code", header: "PLAN" },
  { key: "price_kobo", header: "PRICE", money: true },
  { key: "face_value_kobo", header: "NEW PRICE", money: true },
];

const dropColumns: Column<Schemas["CatalogueSyncDrop"]>[] = [
  { key: "product_code", header: "PRODUCT" },
  { key: "plan_code", header: "PLAN" },
  { key: "action", get: (d) => (d.action === "take_off_sale" ? "take off sale" : "keep on sale") },
  { key: "delivered_by", header: "STILL DELIVERED BY", get: (d) => d.delivered_by.join(", ") || "-" },
];

const newPlanColumns: Column<Schemas["ProviderPlan"]>[] = [
  { key: "plan_code", header: "PLAN" },
  { key: "service" },
  { key: "network" },
  { key: "face_value_kobo", header: "FACE VALUE", money: true },
  { key: "name" },
];

/** The differences as tables, each under a heading; the new plans last, since nothing applies them. */
async function printDifferences(ctx: Context, sync: CatalogueSync): Promise<void> {
  const { printer } = ctx;
  await printer.write(`${sync.provider}: ${sync.plans_listed} plans listed (${sync.services.join(", ")})\n`);
  const section = async <T>(title: string, columns: Column<T>[], rows: T[]) => {
    if (rows.length === 0) return;
    await printer.write(`\n${title} (${rows.length}):\n`);
    await printer.listAll(columns, rows);
  };
  await section("Price changes", priceColumns, sync.price_changes);
  await section("Plans the provider dropped", dropColumns, sync.dropped);
  await section(
    "New plans no product maps (map them under products in the providers file to sell them)",
    newPlanColumns,
    sync.new_plans,
  );
  if (sync.in_sync) await printer.write("\nNothing to apply: the catalogue matches the provider's prices and plans.\n");
}

const changeCount = (sync: CatalogueSync) =>
  sync.price_changes.length + sync.dropped.filter((d) => d.action === "take_off_sale").length;

/**
 * `vendctl catalogue sync --provider NAME`: the dry run's differences, then, once confirmed (a terminal asks;
 * --yes without one), applied with the dry run's fingerprint so a list that changed meanwhile is refused.
 */
export const catalogueSyncCommand = (): Command =>
  actionCommand(
    new Command("sync")
      .description(
        "Compare a provider's plan list with the catalogue (new plans, changed prices, dropped plans) and apply the " +
          "differences (admin token, operator role to apply). Asks to confirm on a terminal; --yes without one",
      )
      .requiredOption("--provider <name>", "the provider whose plans to compare (vtu, clubkonnect)")
      .option("--dry-run", "only show the differences")
      .addOption(yesOption()),
    [
      "vendctl catalogue sync --provider vtu",
      "vendctl catalogue sync --provider clubkonnect --dry-run --json",
      "vendctl catalogue sync --provider vtu --yes --json",
    ],
    async (ctx, flags: SyncFlags) => {
      if (!flags.dryRun && !flags.yes && !ctx.interactive) {
        throw new UsageError(
          "Applying a catalogue sync: confirm with --yes, or look with --dry-run (there is no terminal to ask on); nothing was sent",
        );
      }
      const admin = ctx.clients.admin();
      const path = { name: flags.provider };
      const sync = await unwrap(admin.GET("/admin/v1/providers/{name}/catalogue-sync", { params: { path } }));
      const table = ctx.printer.format === "table";
      if (table) await printDifferences(ctx, sync);
      if (flags.dryRun || sync.in_sync) {
        if (!table) await ctx.printer.record(sync, []);
        return;
      }
      await confirmDestructive(
        ctx,
        flags.yes,
        `Apply ${changeCount(sync)} change(s) from ${sync.provider}'s plan list`,
        "Prices change and products go off sale for every account at once",
      );
      const body = { fingerprint: sync.fingerprint };
      const result = await unwrap(admin.POST("/admin/v1/providers/{name}/catalogue-sync", { params: { path }, body }));
      if (!table) return ctx.printer.record(result, []);
      await ctx.printer.write(`\nApplied: ${result.applied.length} product(s) changed.\n`);
      await ctx.printer.listAll(operatorProductColumns, result.applied);
    },
  );
