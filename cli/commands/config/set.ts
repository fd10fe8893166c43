import { Argument, Command } from "commander";
import { checkBaseUrl } from "../../base-url.ts";
import { type SettingName, savedProfile, settingNames, writeProfile } from "../../config.ts";
import { type GlobalOptions, withExample } from "../../context.ts";
import { UsageError } from "../../errors.ts";
import { io } from "../../io.ts";

const settingArgument = () => new Argument("<key>", "setting").choices(Object.keys(settingNames));

/** `-` reads the value from stdin, so a secret stays out of the shell's history and `ps`. */
async function readValue(raw: string): Promise<string> {
  if (raw !== "-") return raw;
  const chunks: Buffer[] = [];
  for await (const chunk of io().stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8").split("\n")[0]?.trim() ?? "";
}

function checked(key: SettingName, value: string): string {
  if (key === "base_url") return checkBaseUrl(value, "the command line");
  if (value === "" || /\s/.test(value)) throw new UsageError(`${key} must be one word without spaces`);
  if (key === "api_key" && !/^rg_(test|live)_/.test(value)) throw new UsageError("api_key must start with rg_test_ or rg_live_");
  return value;
}

export const configSetCommand = (): Command =>
  withExample(
    new Command("set")
      .description(
        "Save one setting in the profile (--profile, default the active one; created if new). Not checked against " +
          "the API: `vendctl auth status` does that. A value of - is read from stdin.",
      )
      .addArgument(settingArgument())
      .argument("<value>", "the value, or - to read it from stdin"),
    "vendctl config set base_url https://vend.example.com --profile staging",
    "pass show vend/api-key | vendctl config set api_key -",
  ).action(async (key: SettingName, raw: string, _flags: unknown, command: Command) => {
    const { name, profile } = savedProfile(command.optsWithGlobals<GlobalOptions>(), { create: true });
    const value = checked(key, await readValue(raw));
    const path = writeProfile(name, { ...profile, [settingNames[key]]: value });
    io().stderr.write(`Saved ${key} in profile "${name}" (${path})\n`);
  });

export const configUnsetCommand = (): Command =>
  withExample(
    new Command("unset")
      .description("Remove one setting from the profile (--profile, default the active one)")
      .addArgument(settingArgument()),
    "vendctl config unset admin_token",
  ).action(async (key: SettingName, _flags: unknown, command: Command) => {
    const { name, profile } = savedProfile(command.optsWithGlobals<GlobalOptions>());
    if (profile?.[settingNames[key]] === undefined) {
      io().stderr.write(`${key} is not set in profile "${name}"\n`);
      return;
    }
    const { [settingNames[key]]: _removed, ...rest } = profile;
    const path = writeProfile(name, rest);
    io().stderr.write(`Removed ${key} from profile "${name}" (${path})\n`);
  });
