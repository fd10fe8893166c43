import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "./errors.ts";

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
}

export type Source = "flag" | "env" | "profile" | "default" | "none";

export interface ResolvedConfig {
  profile: string;
  baseUrl: string;
  apiKey?: string;
  adminToken?: string;
  sources: { baseUrl: Source; apiKey: Source; adminToken: Source };
}

type Env = Record<string, string | undefined>;

/** VENDCTL_CONFIG_DIR, else $XDG_CONFIG_HOME/vendctl, else ~/.config/vendctl. */
export function configDir(env: Env = process.env): string {
  if (env.VENDCTL_CONFIG_DIR) return env.VENDCTL_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "vendctl");
}

export const configPath = (env: Env = process.env): string => join(configDir(env), "config.json");

export function readConfigFile(env: Env = process.env): ConfigFile {
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

/** Writes one profile, keeping the others; the file holds secrets, so it is private to the user. */
export function writeProfile(name: string, profile: Profile, env: Env = process.env): string {
  const file = readConfigFile(env);
  file.profiles[name] = profile;
  mkdirSync(configDir(env), { recursive: true, mode: 0o700 });
  const path = configPath(env);
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

function pick(flag: string | undefined, envValue: string | undefined, profileValue: string | undefined) {
  if (flag) return { value: flag, source: "flag" as const };
  if (envValue) return { value: envValue, source: "env" as const };
  if (profileValue) return { value: profileValue, source: "profile" as const };
  return { value: undefined, source: "none" as const };
}

/** Flags, then VENDCTL_* environment variables, then the named profile. */
export function resolveConfig(flags: ConfigFlags, env: Env = process.env): ResolvedConfig {
  const name = flags.profile || env.VENDCTL_PROFILE || defaultProfile;
  const profiles = readConfigFile(env).profiles;
  const profile = profiles[name];
  if (!profile && name !== defaultProfile) throw new UsageError(`no profile "${name}" in ${configPath(env)}; run vendctl login`);
  const baseUrl = pick(flags.baseUrl, env.VENDCTL_BASE_URL, profile?.baseUrl);
  const apiKey = pick(flags.apiKey, env.VENDCTL_API_KEY, profile?.apiKey);
  const adminToken = pick(flags.adminToken, env.VENDCTL_ADMIN_TOKEN, profile?.adminToken);
  return {
    profile: name,
    baseUrl: (baseUrl.value ?? defaultBaseUrl).replace(/\/+$/, ""),
    apiKey: apiKey.value,
    adminToken: adminToken.value,
    sources: { baseUrl: baseUrl.value ? baseUrl.source : "default", apiKey: apiKey.source, adminToken: adminToken.source },
  };
}
