import { type ServiceCode, serviceCodes } from "../../generated/constants.ts";
import type { Config, Env, EnvReader, ProviderCallBound, ProviderConfigs, RoutingConfig } from "../config.ts";
import type { Database } from "../db/client.ts";
import { AppError } from "../errors.ts";
import type { Queue, Task } from "../lib/job-queue.ts";
import type { Mode } from "../lib/scope.ts";
import type { Logger } from "../logger.ts";
import { clubkonnectPlugin } from "./clubkonnect/plugin.ts";
import { ProviderHealth } from "./health.ts";
import { readProviderSettings } from "./providers-file.ts";
import { sandboxPlugin } from "./sandbox/plugin.ts";
import type {
  CallbackHint,
  ProviderAdapter,
  ProviderCallbacks,
  ProviderContext,
  ProviderPlugin,
  ProviderTaskContext,
} from "./types.ts";
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
  callbackHint: ((query: Record<string, string>) => CallbackHint | null) | undefined;
  tasks(context: ProviderTaskContext): Task[];
  queues(context: ProviderTaskContext): Queue[];
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
    callbackHint: "callbackHint" in plugin ? plugin.callbackHint : undefined,
    tasks: (context) => plugin.tasks?.(config, context) ?? [],
    queues: (context) => plugin.queues?.(config, context) ?? [],
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

/** How each configured provider that notifies by unsigned GETs names the order, under its name. */
export function configuredCallbackHints(config: Config): Map<string, (query: Record<string, string>) => CallbackHint | null> {
  return new Map(
    configured(config.providers).flatMap(([name, plugin]) => (plugin.callbackHint ? [[name, plugin.callbackHint] as const] : [])),
  );
}

/** The periodic background work of every configured provider. */
export function providerTasks(config: Config, context: ProviderTaskContext): Task[] {
  return configured(config.providers).flatMap(([, plugin]) => plugin.tasks(context));
}

/** The background queues of every configured provider. */
export function providerQueues(config: Config, context: ProviderTaskContext): Queue[] {
  return configured(config.providers).flatMap(([, plugin]) => plugin.queues(context));
}

/** What routing needs to know of a vend. */
export interface RoutedProduct {
  service: ServiceCode;
  network: string;
}

export interface EffectiveRoute {
  service: ServiceCode;
  /** Null: every network of the service without a route of its own. */
  network: string | null;
  providers: string[];
}

export interface Providers {
  readonly health: ProviderHealth;
  get(name: string): ProviderAdapter | undefined;
  /** Every provider of this process, in registry order (test stand-ins last), with the mode it carries. */
  list(): { name: string; mode: Mode; adapter: ProviderAdapter }[];
  /** The providers that may carry a vend of this mode and product, in order of preference (test mode: the sandbox). */
  candidates(mode: Mode, product: RoutedProduct): string[];
  /**
   * Accept time: the first candidate that is enabled and whose breakers are not open (a half-open one
   * counts: the worker decides on its probe). 503 NO_ROUTE (nothing created) when there is none.
   */
  routeFor(mode: Mode, product: RoutedProduct): ProviderAdapter;
  /** The provider's own code for a catalogue product, when the providers file gives one. */
  providerCode(provider: string, productCode: string): string | undefined;
  /** The live routes as matched: those with a network first, then those for a whole service. */
  effectiveRoutes(): EffectiveRoute[];
}

function describe(mode: Mode, product: RoutedProduct): string {
  return mode === "live" ? `live ${product.service} on ${product.network}` : `${mode} vends`;
}

/**
 * The adapters of every configured provider and the routes between them. Test mode goes to the
 * test-mode providers (the sandbox); live mode by `config.routing.routes`, or, without routes, to every
 * configured live provider in registry order. `liveAdapters` (tests) stand in for the configured live
 * providers. `health` decides which of a route's providers are usable now.
 */
export function createProviders(db: Database, config: Config, logger: Logger, liveAdapters?: ProviderAdapter[]): Providers {
  const entries: { name: string; mode: Mode; adapter: ProviderAdapter }[] = [];
  for (const [name, plugin] of configured(config.providers)) {
    if (liveAdapters && plugin.mode === "live") continue;
    entries.push({ name, mode: plugin.mode, adapter: plugin.createAdapter({ db }) });
  }
  for (const adapter of liveAdapters ?? []) entries.push({ name: adapter.name, mode: "live", adapter });
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  const namesOf = (mode: Mode) => entries.filter((e) => e.mode === mode).map((e) => e.name);
  const { routes, productCodes } = config.routing;
  const health = new ProviderHealth(db, config.routing, logger);

  function candidates(mode: Mode, product: RoutedProduct): string[] {
    if (mode !== "live" || routes.length === 0) return namesOf(mode);
    const route =
      routes.find((r) => r.service === product.service && r.network === product.network) ??
      routes.find((r) => r.service === product.service && r.network === undefined);
    return (route?.providers ?? []).filter((name) => byName.get(name)?.mode === "live");
  }

  return {
    health,
    get: (name) => byName.get(name)?.adapter,
    list: () => entries,
    candidates,
    routeFor(mode, product) {
      const names = candidates(mode, product);
      const usable = names.find((name) => health.usable(name, product.service, false));
      const adapter = usable === undefined ? undefined : byName.get(usable)?.adapter;
      if (adapter) return adapter;
      throw new AppError(
        "NO_ROUTE",
        names.length === 0
          ? `No provider route is configured for ${describe(mode, product)}; nothing was created or charged`
          : `No provider is available for ${describe(mode, product)} (${names.join(", ")}: disabled or failing); nothing was created or charged`,
        null,
        names.length === 0 ? {} : { "retry-after": String(Math.ceil(config.routing.breaker.cooldownMs / 1000)) },
      );
    },
    providerCode: (provider, productCode) => productCodes[provider]?.[productCode],
    effectiveRoutes() {
      if (routes.length === 0) {
        const live = namesOf("live");
        return live.length === 0 ? [] : serviceCodes.map((service) => ({ service, network: null, providers: live }));
      }
      const specific = routes.filter((r) => r.network !== undefined);
      const general = routes.filter((r) => r.network === undefined);
      return [...specific, ...general].map((r) => ({ service: r.service, network: r.network ?? null, providers: r.providers }));
    },
  };
}
