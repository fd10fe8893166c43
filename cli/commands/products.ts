import { Command } from "commander";
import { withExample } from "../context.ts";
import { productsListCommand } from "./products/list.ts";
import { productsUpdateCommand } from "./products/update.ts";

export const productsCommand = (): Command =>
  withExample(
    new Command("products")
      .description("The products on sale, and an operator's changes to them")
      .addCommand(productsListCommand())
      .addCommand(productsUpdateCommand()),
    "vendctl products update mtn-data-1gb-1d --price 300 --yes",
  );
