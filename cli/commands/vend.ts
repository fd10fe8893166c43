import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { airtimeCommand } from "./vend/airtime.ts";
import { bulkCommand } from "./vend/bulk.ts";
import { cableCommand } from "./vend/cable.ts";
import { dataCommand } from "./vend/data.ts";
import { electricityCommand } from "./vend/electricity.ts";

export const vendCommand = (): Command =>
  commandGroup(
    new Command("vend")
      .summary("Buy airtime, data, electricity or cable TV")
      .description(
        "Buy airtime, data, electricity or cable TV, one order or a CSV file of them (vend bulk). On a terminal, missing inputs are asked for; " +
          "without a terminal or with --yes nothing is asked. A live key's vend (rg_live_…, real money) shows its price and asks to confirm on a " +
          "terminal and needs --yes without one; a test key's vend never asks to confirm. The Idempotency-Key used is always printed (on stderr with --json).",
      ),
    [airtimeCommand(), dataCommand(), electricityCommand(), cableCommand(), bulkCommand()],
    "vendctl vend airtime --network mtn --phone 08031234567 --amount 100 --yes",
    "vendctl vend data                       # on a terminal: pick network and bundle (a live key also confirms the price)",
    "vendctl vend bulk orders.csv            # every row of a CSV file; results in orders.csv.results.csv",
  );
