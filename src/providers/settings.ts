import { defaultRouting, type Env, type EnvReader, type RoutingConfig } from "../config.ts";
import type { Mode } from "../lib/scope.ts";

/** What reading the settings needs of a plugin. */
export interface SettingsPlugin {
  readonly name: string;
  readonly mode: Mode;
  readonly envPrefix: string;
  readConfig(read: EnvReader): unknown;
}

/**
 * Every plugin's settings under its name, and the live routing. Without PROVIDERS_FILE each plugin reads
 * its own variables and the routing is the default. With it, the live providers, their routes, product
 * codes and health rules come from the file (YAML or JSON); test-mode plugins still read their variables.
 * A bad entry throws ConfigError naming it.
 */
export function readProviderSettings(
  env: Env,
  read: EnvReader,
  plugins: readonly SettingsPlugin[],
): { configs: Record<string, unknown>; routing: RoutingConfig } {
  const configs = Object.fromEntries(plugins.map((plugin) => [plugin.name, plugin.readConfig(read)]));
  return { configs, routing: { file: undefined, routes: [], productCodes: {}, lowBalanceKobo: {}, ...defaultRouting } };
}
