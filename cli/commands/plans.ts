import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { plansAssignCommand } from "./plans/assign.ts";
import { plansCreateCommand } from "./plans/create.ts";
import { plansListCommand } from "./plans/list.ts";
import { plansShowCommand } from "./plans/show.ts";
import { plansUpdateCommand } from "./plans/update.ts";

export const plansCommand = (): Command =>
  commandGroup(
    new Command("plans").description(
      "Price plans: named discounts per service, network or product, and which account is on which",
    ),
    [plansListCommand(), plansShowCommand(), plansCreateCommand(), plansUpdateCommand(), plansAssignCommand()],
    "vendctl plans create gold --discount service:data=300 --discount product:mtn-airtime=450",
    "vendctl plans assign 4f0c…-account-id gold --yes",
  );
