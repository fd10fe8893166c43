import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { batchesGetCommand } from "./batches/get.ts";
import { batchesListCommand } from "./batches/list.ts";

export const batchesCommand = (): Command =>
  commandGroup(
    new Command("batches").description(
      "Bulk orders (vend bulk) of the API key's account and mode: list them and show one, with their orders counted by status",
    ),
    [batchesListCommand(), batchesGetCommand()],
    "vendctl batches list --open",
  );
