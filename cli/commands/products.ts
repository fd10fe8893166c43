import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { productsListCommand } from "./products/list.ts";
import { productsUpdateCommand } from "./products/update.ts";

export const productsCommand = (): Command =>
  commandGroup(
    new Command("products").description("The products on sale, and an operator's changes to them"),
    [productsListCommand(), productsUpdateCommand()],
    "vendctl products update mtn-data-1gb-1d --price 300 --yes",
  );
