import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomically } from "./atomic-file.ts";
import { checkBaseUrl } from "./base-url.ts";
import { UsageError } from "./errors.ts";
import { io } from "./io.ts";

export const defaultBaseUrl = "http://localhost:8080";
export const defaultProfile = "default";

export interface Profile {
  baseUrl?: string;
  apiKey?: string;
  adminToken?: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
}

/** The global flags that carry configuration. */
export interface ConfigFlags {
  baseUrl?: string;
  apiKey?: string;
  adminToken?: string;
  profile?: string;
  debug?: boolean;
}

export type Source = "flag" | "env" | "profile" | "default" | "none";

export interface ResolvedConfig {
  profile: string;
  baseUrl: string;
  apiKey?: string;
  adminToken?: string;
  sources: { baseUrl: Source; apiKey: Source; adminToken: Source };
  /** Print each HTTP request and response on stderr (--debug, VENDCTL_DEBUG=1). */
  debug: boolean;
}

type Env = Record<string, string | undefined>;

/** VENDCTL_CONFIG_DIR, else $XDG_CONFIG_HOME/vendctl, else ~/.config/vendctl. */
export function configDir(env: Env = io().env): string {
  if (env.VENDCTL_CONFIG_DIR) return env.VENDCTL_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "vendctl");
}

export const configPath = (env: Env = io().env): string => join(configDir(env), "config.json");

/** The profile a command works on: --profile, then VENDCTL_PROFILE, then "default". */
export const activeProfileName = (flags: ConfigFlags, env: Env = io().env): string =>
  flags.profile || env.VENDCTL_PROFILE || defaultProfile;

export const debugEnabled = (flags: ConfigFlags, env: Env = io().env): boolean =>
  Boolean(flags.debug) || ["1", "true", "yes"].includes((env.VENDCTL_DEBUG ?? "").toLowerCase());

export function readConfigFile(env: Env = io().env): ConfigFile {
  const path = configPath(env);
  if (!existsSync(path)) return { profiles: {} };
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof parsed === "object" && parsed !== null && "profiles" in parsed && typeof parsed.profiles === "object") {
      return { profiles: { ...(parsed.profiles as Record<string, Profile>) } };
    }
  } catch {
    // reported below
  }
  throw new UsageError(`${path} is not a vendctl configuration file; fix or remove it`);
}

/** A usage error for a profile that does not exist, naming those that do. */
export function unknownProfile(name: string, file: ConfigFile, env: Env = io().env): UsageError {
  const names = Object.keys(file.profiles);
  const create = `create it with \`vendctl login --profile ${name}\``;
  if (names.length === 0)
    return new UsageError(`no profile "${name}": no profiles are saved in ${configPath(env)} yet; ${create}`);
  return new UsageError(`no profile "${name}" in ${configPath(env)}; profiles: ${names.join(", ")} (or ${create})`);
}

const profileNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Replaces the whole file atomically: a private temporary file in the same directory, flushed to disk, then
 * renamed over the old one, so a reader (or a crash) sees the old file or the new one, never half of one.
 */
export function writeConfigFile(file: ConfigFile, env: Env = io().env): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = configPath(env);
  writeFileAtomically(path, `${JSON.stringify(file, null, 2)}\n`, 0o600);
  syncDirectory(dir);
  return path;
}

/** Makes the rename itself durable; not every platform can open a directory, and the file is already whole. */
function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // best effort
  }
}

/** Writes one profile, keeping the others; the file holds secrets, so it is private to the user. */
export function writeProfile(name: string, profile: Profile, env: Env = io().env): string {
  if (!profileNamePattern.test(name)) {
    throw new UsageError(`profile name "${name}" must be letters, digits, ".", "_" or "-" (at most 64)`);
  }
  const file = readConfigFile(env);
  file.profiles[name] = profile;
  return writeConfigFile(file, env);
}

interface Picked {
  value: string | undefined;
  source: Source;
}

function pick(flag: string | undefined, envValue: string | undefined, profileValue: string | undefined): Picked {
  if (flag) return { value: flag, source: "flag" };
  if (envValue) return { value: envValue, source: "env" };
  if (profileValue) return { value: profileValue, source: "profile" };
  return { value: undefined, source: "none" };
}

/** Where a value came from, in the words the user would use to change it. */
export function describeSource(
  source: Source,
  setting: "baseUrl" | "apiKey" | "adminToken",
  profile: string,
  env: Env = io().env,
): string {
  const [flag, variable] = {
    baseUrl: ["--base-url", "VENDCTL_BASE_URL"] as const,
    apiKey: ["--api-key", "VENDCTL_API_KEY"] as const,
    adminToken: ["--admin-token", "VENDCTL_ADMIN_TOKEN"] as const,
  }[setting];
  if (source === "flag") return flag;
  if (source === "env") return variable;
  if (source === "profile") return `profile "${profile}" in ${configPath(env)}`;
  return source === "default" ? "the default" : "nowhere";
}

/** The configured API key is a live one (`rg_live_…`): what it vends is paid with real money. */
export const usesLiveKey = (config: ResolvedConfig): boolean => config.apiKey?.startsWith("rg_live_") ?? false;

/** Flags, then VENDCTL_* environment variables, then the named profile. */
export function resolveConfig(flags: ConfigFlags, env: Env = io().env): ResolvedConfig {
  const name = activeProfileName(flags, env);
  const file = readConfigFile(env);
  const profile = file.profiles[name];
  if (!profile && name !== defaultProfile) throw unknownProfile(name, file, env);
  // An explicit empty --base-url is a mistake to report, not a reason to fall back to the profile.
  const baseUrl: Picked =
    flags.baseUrl === "" ? { value: "", source: "flag" } : pick(flags.baseUrl, env.VENDCTL_BASE_URL, profile?.baseUrl);
  const apiKey = pick(flags.apiKey, env.VENDCTL_API_KEY, profile?.apiKey);
  const adminToken = pick(flags.adminToken, env.VENDCTL_ADMIN_TOKEN, profile?.adminToken);
  const baseUrlSource: Source = baseUrl.value === undefined ? "default" : baseUrl.source;
  return {
    profile: name,
    baseUrl: checkBaseUrl(baseUrl.value ?? defaultBaseUrl, describeSource(baseUrlSource, "baseUrl", name, env)),
    apiKey: apiKey.value,
    adminToken: adminToken.value,
    sources: { baseUrl: baseUrlSource, apiKey: apiKey.source, adminToken: adminToken.source },
    debug: debugEnabled(flags, env),
  };
}

/** The names `vendctl config` uses for a profile's settings, as in the API's snake_case. */
export const settingNames = { base_url: "baseUrl", api_key: "apiKey", admin_token: "adminToken" } as const;
export type SettingName = keyof typeof settingNames;

/** The saved profile a config command works on; a named one that does not exist is a usage error unless it is to be created. */
export function savedProfile(
  flags: ConfigFlags,
  options: { create?: boolean } = {},
  env: Env = io().env,
): { name: string; profile?: Profile; file: ConfigFile } {
  const name = activeProfileName(flags, env);
  const file = readConfigFile(env);
  const profile = file.profiles[name];
  if (!profile && name !== defaultProfile && !options.create) throw unknownProfile(name, file, env);
  return { name, profile, file };
}
