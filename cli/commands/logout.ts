import { Command } from "commander";
import { type ConfigFile, configPath, type Profile, savedProfile, writeConfigFile } from "../config.ts";
import { type GlobalOptions, withExample } from "../context.ts";
import { io } from "../io.ts";

/** The profile without its credentials, or undefined when nothing would be left. */
function withoutCredentials(profile: Profile): Profile | undefined {
  const { apiKey: _key, adminToken: _token, ...rest } = profile;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function logOut(file: ConfigFile, names: string[]): string[] {
  const changed: string[] = [];
  for (const name of names) {
    const profile = file.profiles[name];
    if (!profile || (!profile.apiKey && !profile.adminToken)) continue;
    const kept = withoutCredentials(profile);
    if (kept) file.profiles[name] = kept;
    else delete file.profiles[name];
    changed.push(name);
  }
  return changed;
}

export const logoutCommand = (): Command =>
  withExample(
    new Command("logout")
      .description(
        "Remove the API key and admin token saved in the profile (--profile, default the active one; --all: every " +
          "profile). The base URL stays. The key itself keeps working on the server: revoke it with `vendctl keys revoke`.",
      )
      .option("--all", "every profile"),
    "vendctl logout",
    "vendctl logout --profile staging",
    "vendctl logout --all",
  ).action(async (flags: { all?: boolean }, command: Command) => {
    const { name, file } = savedProfile(command.optsWithGlobals<GlobalOptions>());
    const changed = logOut(file, flags.all ? Object.keys(file.profiles) : [name]);
    if (changed.length === 0) {
      io().stderr.write(`No credentials saved in ${flags.all ? "any profile" : `profile "${name}"`}; nothing to remove.\n`);
    } else {
      writeConfigFile(file);
      const which = changed.map((n) => `"${n}"`).join(", ");
      io().stderr.write(
        `Removed the saved credentials of profile${changed.length > 1 ? "s" : ""} ${which} from ${configPath()}.\n`,
      );
    }
    const stillSet = ["VENDCTL_API_KEY", "VENDCTL_ADMIN_TOKEN"].filter((variable) => io().env[variable]);
    if (stillSet.length > 0) io().stderr.write(`Note: ${stillSet.join(" and ")} still set in this shell's environment.\n`);
  });
