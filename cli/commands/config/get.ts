import { Argument, Command } from "commander";
import { type SettingName, savedProfile, settingNames } from "../../config.ts";
import { type GlobalOptions, printerOf, withExample } from "../../context.ts";
import { io } from "../../io.ts";

export const configGetCommand = (): Command =>
  withExample(
    new Command("get")
      .description(
        "Print one setting of the saved profile (--profile, default the active one), secrets in full; " +
          "the bare value even when piped (--json: a JSON string or null)",
      )
      .addArgument(new Argument("<key>", "setting").choices(Object.keys(settingNames))),
    "vendctl config get base_url",
    "vendctl config get api_key --profile staging",
  ).action(async (key: SettingName, _flags: unknown, command: Command) => {
    const printer = printerOf(command);
    const globals = command.optsWithGlobals<GlobalOptions>();
    const { name, profile } = savedProfile(globals);
    const value = profile?.[settingNames[key]];
    // The bare value even when piped, so `$(vendctl config get api_key)` works; JSON only when asked for.
    if (globals.json) return printer.write(`${JSON.stringify(value ?? null)}\n`);
    if (value === undefined) {
      io().stderr.write(`${key} is not set in profile "${name}"\n`);
      return;
    }
    await printer.write(`${value}\n`);
  });
