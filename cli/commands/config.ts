import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { configGetCommand } from "./config/get.ts";
import { configListCommand } from "./config/list.ts";
import { configSetCommand, configUnsetCommand } from "./config/set.ts";

export const configCommand = (): Command =>
  commandGroup(
    new Command("config").description("Saved profiles and their settings (base_url, api_key, admin_token)"),
    [configListCommand(), configGetCommand(), configSetCommand(), configUnsetCommand()],
    "vendctl config list",
    "vendctl config set base_url https://vend.example.com --profile staging",
  );
