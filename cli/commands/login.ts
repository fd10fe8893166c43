import { Command } from "commander";
import { checkBaseUrl } from "../base-url.ts";
import { buildClient, unwrap } from "../client.ts";
import { activeProfileName, debugEnabled, defaultBaseUrl, type Profile, readConfigFile, writeProfile } from "../config.ts";
import { type GlobalOptions, printerOf, withExample } from "../context.ts";
import { io } from "../io.ts";
import { ask, askSecret, isInteractive } from "../prompt.ts";

const mask = (secret: string | undefined): string => (secret ? `${secret.slice(0, 12)}…` : "-");

function validBaseUrl(value: string): true | string {
  try {
    checkBaseUrl(value, "the prompt");
    return true;
  } catch (error) {
    // The prompt shows the value already; say only what is wrong with it.
    return (error instanceof Error ? error.message : String(error)).replace(/^base URL ".*" \(from the prompt\) /, "");
  }
}

/** Flag, then environment, then (on a terminal) a prompt defaulting to the saved value, else the saved value. */
async function gather(globals: GlobalOptions, saved: Profile, interactive: boolean): Promise<Profile> {
  const env = io().env;
  const baseUrlFrom = globals.baseUrl !== undefined ? "--base-url" : env.VENDCTL_BASE_URL ? "VENDCTL_BASE_URL" : undefined;
  let baseUrl = globals.baseUrl ?? (env.VENDCTL_BASE_URL || undefined);
  if (baseUrl !== undefined && baseUrlFrom) baseUrl = checkBaseUrl(baseUrl, baseUrlFrom);
  let apiKey = globals.apiKey || env.VENDCTL_API_KEY;
  let adminToken = globals.adminToken || env.VENDCTL_ADMIN_TOKEN;
  if (interactive) {
    baseUrl ??= checkBaseUrl(
      await ask("Base URL", { default: saved.baseUrl ?? defaultBaseUrl, validate: validBaseUrl }),
      "the prompt",
    );
    apiKey ??= (await askSecret(`API key${saved.apiKey ? " (empty: keep the saved one)" : " (empty: none)"}`)) || saved.apiKey;
    adminToken ??=
      (await askSecret(`Admin token${saved.adminToken ? " (empty: keep the saved one)" : " (empty: none)"}`)) || saved.adminToken;
  }
  return {
    baseUrl: baseUrl ?? checkBaseUrl(saved.baseUrl ?? defaultBaseUrl, "the saved profile"),
    apiKey: apiKey ?? saved.apiKey,
    adminToken: adminToken ?? saved.adminToken,
  };
}

/** Each value is checked against the API: the server answers, the key reads its wallet, the token lists accounts. */
async function check(profile: Profile, debug: boolean): Promise<{ mode?: string }> {
  const baseUrl = profile.baseUrl ?? defaultBaseUrl;
  const client = (token?: string) => buildClient(baseUrl, token, { debug });
  await unwrap(client().GET("/healthz"));
  const wallet = profile.apiKey ? await unwrap(client(profile.apiKey).GET("/api/v1/wallet")) : undefined;
  if (profile.adminToken) {
    await unwrap(client(profile.adminToken).GET("/admin/v1/accounts", { params: { query: { limit: 1 } } }));
  }
  return { mode: wallet?.mode };
}

export const loginCommand = (): Command =>
  withExample(
    new Command("login")
      .summary("Check and save base URL, API key and admin token as a profile")
      .description(
        "Save the base URL, API key and admin token as a profile after checking them against the API. " +
          "On a terminal, values not given as flags (or VENDCTL_* variables) are asked for.",
      ),
    "vendctl login",
    "vendctl login --base-url http://localhost:8080 --api-key rg_test_… --admin-token … --profile staging",
  ).action(async (_flags: unknown, command: Command) => {
    const printer = printerOf(command);
    const globals = command.optsWithGlobals<GlobalOptions>();
    const name = activeProfileName(globals);
    const saved = readConfigFile().profiles[name] ?? {};
    const profile = await gather(globals, saved, isInteractive());
    const { mode } = await check(profile, debugEnabled(globals));
    const path = writeProfile(name, profile);
    await printer.record(
      {
        profile: name,
        path,
        base_url: profile.baseUrl,
        api_key: mask(profile.apiKey),
        key_mode: mode ?? null,
        admin_token: profile.adminToken ? "checked" : null,
      },
      [{ key: "profile" }, { key: "path" }, { key: "base_url" }, { key: "api_key" }, { key: "key_mode" }, { key: "admin_token" }],
    );
  });
