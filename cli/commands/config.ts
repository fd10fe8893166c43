import { Command } from "commander";
import { withExample } from "../context.ts";
import { configGetCommand } from "./config/get.ts";
import { configListCommand } from "./config/list.ts";
import { configSetCommand, configUnsetCommand } from "./config/set.ts";

export const configCommand = (): Command =>
  withExample(
    new Command("config")
      .description("Saved profiles and their settings (base_url, api_key, admin_token)")
      .addCommand(configListCommand())
      .addCommand(configGetCommand())
      .addCommand(configSetCommand())
      .addCommand(configUnsetCommand()),
    "vendctl config list",
    "vendctl config set base_url https://vend.example.com --profile staging",
  );
