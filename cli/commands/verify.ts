import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { verifyMeterCommand } from "./verify/meter.ts";
import { verifySmartcardCommand } from "./verify/smartcard.ts";

export const verifyCommand = (): Command =>
  commandGroup(
    new Command("verify").description("Check a meter or smartcard before paying"),
    [verifyMeterCommand(), verifySmartcardCommand()],
    "vendctl verify meter --disco ikedc --meter 45031234567",
  );
