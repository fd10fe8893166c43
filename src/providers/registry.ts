import type { Config, Env, EnvReader, ProviderCallBound, ProviderConfigs, RoutingConfig } from "../config.ts";
import type { Database } from "../db/client.ts";
import { AppError } from "../errors.ts";
import type { Task } from "../jobs/queue.ts";
import type { Mode } from "../lib/scope.ts";
import { clubkonnectPlugin } from "./clubkonnect/plugin.ts";
import { sandboxPlugin } from "./sandbox/plugin.ts";
import { readProviderSettings } from "./settings.ts";
import type { ProviderAdapter, ProviderCallbacks, ProviderContext, ProviderPlugin, ProviderTaskContext } from "./types.ts";
import { vtuPlugin } from "./vtu/plugin.ts";

/** Every provider this service can use, under its name. Adding a provider is one line here. */
const plugins = { sandbox: sandboxPlugin, vtu: vtuPlugin, clubkonnect: clubkonnectPlugin };

type Plugins = typeof plugins;
type ProviderName = keyof Plugins;

/** Each provider's settings under its name, as its plugin read them (undefined: not configured). */
type RegisteredConfigs = { [K in ProviderName]: ReturnType<Plugins[K]["readConfig"]> };

declare module "../config.ts" {
  /** `Config.providers`: the settings of every provider listed here. */
  interface ProviderConfigs extends RegisteredConfigs {}
}

// Also checks that each plugin is listed under its own name.
const pluginsByName: { [K in ProviderName]: ProviderPlugin<NonNullable<ProviderConfigs[K]>, K> } = plugins;
const names = Object.keys(plugins) as ProviderName[];

/** A configured plugin with its settings bound. */
interface ConfiguredPlugin {
  mode: Mode;
  longestCall: ProviderCallBound | undefined;
  createAdapter(context: ProviderContext): ProviderAdapter;
  callbacks: ProviderCallbacks | undefined;
  tasks(context: ProviderTaskContext): Task[];
}

function bind<K extends ProviderName>(name: K, configs: ProviderConfigs): ConfiguredPlugin | undefined {
  const plugin = pluginsByName[name];
  const config = configs[name];
  if (config === undefined) return undefined;
  return {
    mode: plugin.mode,
    longestCall: plugin.longestCall?.(config),
    createAdapter: (context) => plugin.createAdapter(config, context),
    callbacks: plugin.callbacks?.(config),
    tasks: (context) => plugin.tasks?.(config, context) ?? [],
  };
}

function configured(configs: ProviderConfigs): [string, ConfiguredPlugin][] {
  return names.flatMap((name) => {
    const bound = bind(name, configs);
    return bound ? [[name, bound] as [string, ConfiguredPlugin]] : [];
  });
}

/**
 * Every plugin's settings, from its own variables or the providers file, and the live routing; a bad value
 * throws ConfigError naming it.
 */
export function readProviders(env: Env, read: EnvReader): { providers: ProviderConfigs; routing: RoutingConfig } {
  const { configs, routing } = readProviderSettings(env, read, Object.values(plugins));
  return { providers: configs as ProviderConfigs, routing };
}

/** The longest one call to any configured provider can take; undefined when none has a bound. */
export function longestProviderCall(configs: ProviderConfigs): ProviderCallBound | undefined {
  let longest: ProviderCallBound | undefined;
  for (const [, plugin] of configured(configs)) {
    if (plugin.longestCall && (!longest || plugin.longestCall.ms > longest.ms)) longest = plugin.longestCall;
  }
  return longest;
}

/** How each configured provider's callbacks are checked and read, under its name. */
export function configuredCallbacks(config: Config): Map<string, ProviderCallbacks> {
  return new Map(
    configured(config.providers).flatMap(([name, plugin]) => (plugin.callbacks ? [[name, plugin.callbacks] as const] : [])),
  );
}

/** The periodic background work of every configured provider. */
export function providerTasks(config: Config, context: ProviderTaskContext): Task[] {
  return configured(config.providers).flatMap(([, plugin]) => plugin.tasks(context));
}

export interface Providers {
  get(name: string): ProviderAdapter | undefined;
  /** The provider a vend of this mode goes to; 503 NO_ROUTE (nothing created) when there is none. */
  routeFor(mode: Mode): ProviderAdapter;
}

/**
 * The adapters of every configured provider. A vend goes to the first provider of its key's mode: test
 * mode to the sandbox, live mode to the configured live provider. `liveAdapters` (tests) stand in for
 * the configured live providers.
 */
export function createProviders(db: Database, config: Config, liveAdapters?: ProviderAdapter[]): Providers {
  const routes: { mode: Mode; adapter: ProviderAdapter }[] = [];
  for (const [, plugin] of configured(config.providers)) {
    if (liveAdapters && plugin.mode === "live") continue;
    routes.push({ mode: plugin.mode, adapter: plugin.createAdapter({ db }) });
  }
  for (const adapter of liveAdapters ?? []) routes.push({ mode: "live", adapter });
  const byName = new Map(routes.map(({ adapter }) => [adapter.name, adapter]));
  const byMode = new Map<Mode, ProviderAdapter>();
  for (const { mode, adapter } of routes) if (!byMode.has(mode)) byMode.set(mode, adapter);
  return {
    get: (name) => byName.get(name),
    routeFor(mode) {
      const route = byMode.get(mode);
      if (!route)
        throw new AppError("NO_ROUTE", `No provider route is configured for ${mode} vends; nothing was created or charged`);
      return route;
    },
  };
}
