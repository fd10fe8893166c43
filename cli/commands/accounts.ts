import { Command } from "commander";
import { withExample } from "../context.ts";
import { accountsCreateCommand } from "./accounts/create.ts";
import { accountsListCommand } from "./accounts/list.ts";

export const accountsCommand = (): Command =>
  withExample(
    new Command("accounts")
      .description("Accounts (admin token)")
      .addCommand(accountsCreateCommand())
      .addCommand(accountsListCommand()),
    "vendctl accounts create --name 'Acme Stores'",
  );
