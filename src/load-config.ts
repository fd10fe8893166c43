import { type Config, readConfig } from "./config.ts";
import { longestProviderCall, readProviders } from "./providers/registry.ts";

/**
 * The service's configuration from the environment, the registered providers' variables included;
 * throws ConfigError naming the bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  return readConfig(env, { read: readProviders, longestCall: longestProviderCall });
}
