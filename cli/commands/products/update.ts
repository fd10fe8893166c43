import { Command, InvalidArgumentError } from "commander";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { formatNgn } from "../../../src/lib/shared/money.ts";
import { unwrap } from "../../client.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { contextOf, integerOption, withExample } from "../../context.ts";
import { UsageError } from "../../errors.ts";
import { parseNgn } from "../../money.ts";
import { operatorProductColumns } from "./list.ts";

type ProductUpdate = components["schemas"]["ProductUpdateRequest"];

interface UpdateFlags {
  name?: string;
  price?: string;
  discountBps?: number;
  min?: string;
  max?: string;
  enable?: boolean;
  disable?: boolean;
  yes?: boolean;
}

function basisPoints(value: string): number {
  const bps = integerOption(0)(value);
  if (bps > 10_000) throw new InvalidArgumentError("expected basis points from 0 to 10000 (250 = 2.5%)");
  return bps;
}

function patchOf(flags: UpdateFlags): ProductUpdate {
  if (flags.enable && flags.disable) throw new UsageError("choose --enable or --disable, not both");
  const patch: ProductUpdate = {};
  if (flags.name !== undefined) patch.name = flags.name;
  if (flags.price !== undefined) patch.price_kobo = parseNgn(flags.price, "--price");
  if (flags.discountBps !== undefined) patch.discount_bps = flags.discountBps;
  if (flags.min !== undefined) patch.min_amount_kobo = parseNgn(flags.min, "--min");
  if (flags.max !== undefined) patch.max_amount_kobo = parseNgn(flags.max, "--max");
  if (flags.enable || flags.disable) patch.active = Boolean(flags.enable);
  if (Object.keys(patch).length === 0) {
    throw new UsageError("nothing to change: give --name, --price, --discount-bps, --min, --max, --enable or --disable");
  }
  return patch;
}

/** `price = NGN 250.00`, `active = false`: the change in the flags' terms. */
const describeChange = ([field, value]: [string, unknown]) =>
  field.endsWith("_kobo") && typeof value === "number"
    ? `${field.replace(/(_amount)?_kobo$/, "")} = NGN ${formatNgn(value)}`
    : `${field} = ${String(value)}`;

/** An operator edits a product for every account at once; asks to confirm on a terminal, --yes without one. */
export const productsUpdateCommand = (): Command =>
  withExample(
    new Command("update")
      .description(
        "Change a product's name, price, range, discount or whether it is on sale (admin token, operator role). " +
          "Asks to confirm on a terminal; --yes without one",
      )
      .argument("<code>", "product code, e.g. mtn-data-1gb-1d")
      .option("--name <name>", "new display name")
      .option("--price <ngn>", "price of a fixed-price product, in NGN")
      .option("--discount-bps <n>", "discount of a range product in basis points, 0 to 10000 (250 = 2.5%)", basisPoints)
      .option("--min <ngn>", "smallest amount of a range product, in NGN")
      .option("--max <ngn>", "largest amount of a range product, in NGN")
      .option("--enable", "put the product on sale")
      .option("--disable", "take the product off sale (it leaves the catalogue)")
      .addOption(yesOption()),
    "vendctl products update mtn-data-1gb-1d --price 300 --yes",
    "vendctl products update ikedc-prepaid --discount-bps 250",
    "vendctl products update dstv-padi --disable --yes",
  ).action(async (code: string, flags: UpdateFlags, command: Command) => {
    const patch = patchOf(flags);
    const ctx = contextOf(command);
    const client = ctx.clients.admin();
    const changes = Object.entries(patch).map(describeChange).join(", ");
    await confirmDestructive(
      ctx,
      flags.yes,
      `Update ${code} for every account: ${changes}`,
      "Every account's next order sees it",
    );
    const product = await unwrap(client.PATCH("/admin/v1/products/{code}", { params: { path: { code } }, body: patch }));
    await ctx.printer.record(product, operatorProductColumns);
  });
