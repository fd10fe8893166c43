import { Command } from "commander";
import { withExample } from "../context.ts";
import { verifyMeterCommand } from "./verify/meter.ts";
import { verifySmartcardCommand } from "./verify/smartcard.ts";

export const verifyCommand = (): Command =>
  withExample(
    new Command("verify")
      .description("Check a meter or smartcard before paying")
      .addCommand(verifyMeterCommand())
      .addCommand(verifySmartcardCommand()),
    "vendctl verify meter --disco ikedc --meter 45031234567",
  );
