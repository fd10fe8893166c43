import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { accountsCreateCommand } from "./accounts/create.ts";
import { accountsListCommand } from "./accounts/list.ts";

export const accountsCommand = (): Command =>
  commandGroup(
    new Command("accounts").description("Accounts (admin token)"),
    [accountsCreateCommand(), accountsListCommand()],
    "vendctl accounts create --name 'Acme Stores'",
  );
