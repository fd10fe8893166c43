import { Command } from "commander";
import { activeProfileName, configPath, readConfigFile } from "../../config.ts";
import { type GlobalOptions, printerOf, withExample } from "../../context.ts";
import { maskSecret } from "../../debug.ts";
import { io } from "../../io.ts";
import type { Column } from "../../output.ts";

interface ProfileRow {
  profile: string;
  active: boolean;
  base_url: string | null;
  api_key: string | null;
  admin_token: string | null;
}

const columns: Column<ProfileRow>[] = [
  { key: "active", header: "", get: (row) => (row.active ? "*" : " ") },
  { key: "profile" },
  { key: "base_url", header: "BASE URL" },
  { key: "api_key", header: "API KEY" },
  { key: "admin_token", header: "ADMIN TOKEN" },
];

export const configListCommand = (): Command =>
  withExample(
    new Command("list").description("Saved profiles: base URL, masked API key and admin token; * marks the active one"),
    "vendctl config list",
  ).action(async (_flags: unknown, command: Command) => {
    const printer = printerOf(command);
    const active = activeProfileName(command.optsWithGlobals<GlobalOptions>());
    const rows = Object.entries(readConfigFile().profiles).map(([name, profile]) => ({
      profile: name,
      active: name === active,
      base_url: profile.baseUrl ?? null,
      api_key: profile.apiKey ? maskSecret(profile.apiKey) : null,
      admin_token: profile.adminToken ? maskSecret(profile.adminToken) : null,
    }));
    await printer.listAll(columns, rows);
    if (rows.length === 0) io().stderr.write(`No profiles in ${configPath()} yet; create one with \`vendctl login\`.\n`);
  });
