import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { type ServiceCode, serviceCodes } from "../../generated/constants.ts";
import {
  type Commission,
  type CommissionSchedule,
  ConfigError,
  defaultRouting,
  type Env,
  type EnvReader,
  type ProviderRoute,
  type RoutingConfig,
} from "../config.ts";
import type { Mode } from "../lib/scope.ts";

/** What reading the settings needs of a plugin. */
export interface SettingsPlugin {
  readonly name: string;
  readonly mode: Mode;
  readonly envPrefix: string;
  readConfig(read: EnvReader): unknown;
}

type Settings = { configs: Record<string, unknown>; routing: RoutingConfig };

/**
 * Every plugin's settings under its name, and the live routing. Without PROVIDERS_FILE each plugin reads
 * its own variables and the routing is the default. With it, the live providers, their routes, product
 * codes and health rules come from the file (YAML or JSON); test-mode plugins still read their variables.
 * A bad entry throws ConfigError naming it.
 */
export function readProviderSettings(env: Env, read: EnvReader, plugins: readonly SettingsPlugin[]): Settings {
  const file = env.PROVIDERS_FILE;
  if (file !== undefined && file !== "") return readProvidersFile(env, read, plugins, resolve(file));
  const configs = Object.fromEntries(plugins.map((plugin) => [plugin.name, plugin.readConfig(read)]));
  const routing = { file: undefined, routes: [], productCodes: {}, lowBalanceKobo: {}, commission: {}, floatToleranceKobo: {} };
  return { configs, routing: { ...routing, ...defaultRouting } };
}

/** Throws the ConfigError of one entry of the file: `PROVIDERS_FILE /etc/vend/providers.yaml: routes[2].service …`. */
type Refuse = (entry: string, problem: string) => never;

const topLevelKeys = ["providers", "routes", "breaker", "health_refresh_ms", "balance_check_seconds"];
/** Keys of a provider entry read here rather than by its plugin. */
const routingKeys = ["products", "low_balance_naira", "low_balance_kobo", "commission", "float_tolerance_kobo"];

function readProvidersFile(env: Env, read: EnvReader, plugins: readonly SettingsPlugin[], path: string): Settings {
  const refuse: Refuse = (entry, problem) => {
    throw new ConfigError(`PROVIDERS_FILE ${path}: ${entry}`, problem);
  };
  const document = parseFile(path);
  onlyKeys(document, topLevelKeys, "", refuse);
  const live = readLiveProviders(own(document, "providers"), env, plugins, refuse);
  const configured = [...live.configs.keys()];
  return {
    configs: Object.fromEntries(
      plugins.map((plugin) => [plugin.name, plugin.mode === "live" ? live.configs.get(plugin.name) : plugin.readConfig(read)]),
    ),
    routing: {
      file: path,
      routes: readRoutes(own(document, "routes"), configured, refuse),
      productCodes: live.productCodes,
      lowBalanceKobo: live.lowBalanceKobo,
      commission: live.commission,
      floatToleranceKobo: live.floatToleranceKobo,
      ...readHealthRules(document, refuse),
    },
  };
}

/** The breaker and the health and balance intervals, each within its bounds; absent: the default. */
function readHealthRules(
  document: Record<string, unknown>,
  refuse: Refuse,
): Pick<RoutingConfig, "breaker" | "healthRefreshMs" | "balanceCheckMs"> {
  const breaker = mappingAt(own(document, "breaker") ?? {}, "breaker", refuse);
  onlyKeys(breaker, ["failures", "cooldown_seconds"], "breaker", refuse);
  const setting = (map: Record<string, unknown>, label: string, fallback: number, min: number, max: number) =>
    wholeNumber(own(map, label.replace(/^.*\./, "")), label, fallback, min, max, refuse);
  const { failures, cooldownMs } = defaultRouting.breaker;
  return {
    breaker: {
      failures: setting(breaker, "breaker.failures", failures, 1, 1000),
      cooldownMs: 1000 * setting(breaker, "breaker.cooldown_seconds", cooldownMs / 1000, 1, 86_400),
    },
    healthRefreshMs: setting(document, "health_refresh_ms", defaultRouting.healthRefreshMs, 100, 60_000),
    balanceCheckMs: 1000 * setting(document, "balance_check_seconds", defaultRouting.balanceCheckMs / 1000, 10, 86_400),
  };
}

/** The file's top-level mapping; an unreadable file or bad YAML names PROVIDERS_FILE and the path. */
function parseFile(path: string): Record<string, unknown> {
  const fail: (problem: string) => never = (problem) => {
    throw new ConfigError(`PROVIDERS_FILE ${path}`, problem);
  };
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    fail(`cannot be read (${firstLine(error, ",")})`);
  }
  let document: unknown;
  try {
    document = parse(text, { uniqueKeys: true, prettyErrors: true });
  } catch (error) {
    // Only the parser's first line (problem, line, column): its excerpt of the file is left out of logs.
    fail(`is not valid YAML: ${firstLine(error, "\n").replace(/:$/, "")}`);
  }
  if (!isMapping(document)) fail(`must hold a mapping with the keys ${topLevelKeys.join(", ")}`);
  return document;
}

function firstLine(error: unknown, separator: string): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split(separator)[0] ?? message;
}

interface LiveProviders {
  configs: Map<string, unknown>;
  productCodes: Record<string, Record<string, string>>;
  lowBalanceKobo: Record<string, number>;
  commission: Record<string, CommissionSchedule>;
  floatToleranceKobo: Record<string, number>;
}

/** The live plugins named under `providers`, each read by its own plugin from its entry; the others stay unconfigured. */
function readLiveProviders(value: unknown, env: Env, plugins: readonly SettingsPlugin[], refuse: Refuse): LiveProviders {
  const entries = mappingAt(value ?? {}, "providers", refuse);
  const livePlugins = plugins.filter((plugin) => plugin.mode === "live");
  const liveNames = livePlugins.map((plugin) => plugin.name).join(", ");
  for (const name of Object.keys(entries)) {
    const plugin = plugins.find((candidate) => candidate.name === name);
    if (plugin?.mode === "live") continue;
    const why = plugin ? ` (${name} is a ${plugin.mode}-mode provider, read from its ${plugin.envPrefix} variables)` : "";
    refuse(`providers.${name}`, `is not a live provider${why}; the live providers are: ${liveNames}`);
  }
  const live: LiveProviders = {
    configs: new Map(),
    productCodes: {},
    lowBalanceKobo: {},
    commission: {},
    floatToleranceKobo: {},
  };
  for (const plugin of livePlugins) {
    if (!Object.hasOwn(entries, plugin.name)) continue;
    const at = `providers.${plugin.name}`;
    const entry = mappingAt(own(entries, plugin.name) ?? {}, at, refuse);
    live.configs.set(plugin.name, readEntry(plugin, entry, env, refuse));
    const products = own(entry, "products");
    if (products !== undefined) live.productCodes[plugin.name] = readProductCodes(products, `${at}.products`, refuse);
    const lowBalance = readLowBalance(entry, at, refuse);
    if (lowBalance !== undefined) live.lowBalanceKobo[plugin.name] = lowBalance;
    const commission = own(entry, "commission");
    if (commission !== undefined) live.commission[plugin.name] = readCommission(commission, `${at}.commission`, refuse);
    const tolerance = own(entry, "float_tolerance_kobo");
    if (tolerance !== undefined) {
      const label = `${at}.float_tolerance_kobo`;
      live.floatToleranceKobo[plugin.name] = wholeNumber(tolerance, label, 0, 0, Number.MAX_SAFE_INTEGER, refuse);
    }
  }
  return live;
}

/** A plugin's settings from its entry; an entry that configures nothing, or holds a key it never read, is refused. */
function readEntry(plugin: SettingsPlugin, entry: Record<string, unknown>, env: Env, refuse: Refuse): unknown {
  const at = `providers.${plugin.name}`;
  const reader = entryReader(plugin, entry, env, refuse);
  const config = plugin.readConfig(reader.read);
  if (config === undefined) {
    refuse(at, `configures nothing (${plugin.name} looked for ${reader.written().join(", ")} and found no value)`);
  }
  const known = [...reader.written(), ...routingKeys];
  for (const key of Object.keys(entry)) {
    if (!reader.asked.has(key.replace(/_env$/, "")) && !routingKeys.includes(key)) {
      refuse(`${at}.${key}`, `is an unknown setting (${plugin.name} reads: ${known.join(", ")})`);
    }
  }
  return config;
}

interface EntryReader {
  read: EnvReader;
  /** Every key the plugin asked for (`base_url` for VTU_BASE_URL), which it may also find as `<key>_env`. */
  asked: Set<string>;
  /** The keys asked for as they are written in the file (`base_url`, `api_key_env`). */
  written(): string[];
}

/**
 * An EnvReader over one provider entry: the plugin asks for `VTU_BASE_URL` and gets the entry's `base_url`,
 * or the variable its `base_url_env` names. Secrets come only through `<key>_env`, so none sit in the file.
 */
function entryReader(plugin: SettingsPlugin, entry: Record<string, unknown>, env: Env, refuse: Refuse): EntryReader {
  const at = `providers.${plugin.name}`;
  const asked = new Set<string>();
  const secrets = new Set<string>();
  const keyOf = (name: string): string => {
    if (!name.startsWith(plugin.envPrefix)) {
      throw new Error(`Provider ${plugin.name} read ${name}, outside its prefix ${plugin.envPrefix}`);
    }
    const key = name.slice(plugin.envPrefix.length).toLowerCase();
    asked.add(key);
    return key;
  };
  const variableOf = (key: string): string | undefined => {
    const variable = own(entry, `${key}_env`);
    if (variable === undefined) return undefined;
    if (typeof variable !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
      refuse(`${at}.${key}_env`, `must name an environment variable, got ${describe(variable)}`);
    }
    return variable;
  };
  const labelOf = (key: string): string => {
    const variable = variableOf(key);
    if (variable !== undefined) return `${at}.${key}_env (${variable})`;
    return secrets.has(key) ? `${at}.${key}_env` : `${at}.${key}`;
  };
  /** A setting's value, written in the entry or held by the variable its `<key>_env` names, and how to name it. */
  const settingOf = (key: string): { value: unknown; label: string } => {
    const variable = variableOf(key);
    if (variable === undefined) return { value: own(entry, key), label: labelOf(key) };
    if (own(entry, key) !== undefined) refuse(`${at}.${key}`, `is also given as ${key}_env; keep one`);
    return { value: env[variable], label: labelOf(key) };
  };
  const text = (name: string, minLength = 1): string | undefined => {
    const { value, label } = settingOf(keyOf(name));
    const found = textAt(value, label, refuse);
    if (found !== undefined && found.length < minLength) refuse(label, `must be at least ${minLength} characters long`);
    return found;
  };
  const read: EnvReader = {
    text,
    url: (name) => {
      const found = text(name);
      return found === undefined ? undefined : httpUrl(found, labelOf(keyOf(name)), refuse);
    },
    integer: (name, fallback, min, max) => {
      const { value, label } = settingOf(keyOf(name));
      return wholeNumber(value, label, fallback, min, max, refuse);
    },
    secret: (name) => {
      const key = keyOf(name);
      secrets.add(key);
      if (own(entry, key) !== undefined) {
        refuse(`${at}.${key}`, `must be given as ${key}_env, the name of an environment variable (secrets stay out of the file)`);
      }
      const variable = variableOf(key);
      const secret = variable === undefined ? undefined : env[variable];
      return secret === "" ? undefined : secret;
    },
    refuse: (name, problem) => refuse(labelOf(keyOf(name)), inFileTerms(problem, plugin.envPrefix)),
  };
  const written = () => [...asked].map((key) => (secrets.has(key) ? `${key}_env` : key));
  return { read, asked, written };
}

/** A plugin's message speaks of its variables (`is required when VTU_BASE_URL is set`); in the file they are keys. */
function inFileTerms(problem: string, envPrefix: string): string {
  const escaped = envPrefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return problem.replace(new RegExp(`\\b${escaped}([A-Z0-9_]+)`, "g"), (_, rest: string) => rest.toLowerCase());
}

/** `products`: catalogue product code → this provider's own code for it (checked against the catalogue later). */
function readProductCodes(value: unknown, at: string, refuse: Refuse): Record<string, string> {
  const products = mappingAt(value, at, refuse);
  const codes: Record<string, string> = {};
  for (const [product, code] of Object.entries(products)) {
    const label = `${at}.${product}`;
    if (typeof code !== "string" || code === "" || code.length > 64) {
      refuse(label, `must be the provider's product code, text of 1 to 64 characters, got ${describe(code)}`);
    }
    codes[product] = code;
  }
  return codes;
}

/** The float below which operators are told, as `low_balance_naira` (kobo precision) or `low_balance_kobo`. */
function readLowBalance(entry: Record<string, unknown>, at: string, refuse: Refuse): number | undefined {
  const naira = own(entry, "low_balance_naira");
  const kobo = own(entry, "low_balance_kobo");
  if (naira !== undefined && kobo !== undefined) {
    refuse(`${at}.low_balance_kobo`, "cannot be given with low_balance_naira; keep one");
  }
  if (kobo !== undefined) return wholeNumber(kobo, `${at}.low_balance_kobo`, 0, 0, Number.MAX_SAFE_INTEGER, refuse);
  if (naira === undefined) return undefined;
  const written = typeof naira === "number" || typeof naira === "string" ? String(naira) : "";
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(written);
  const amount = match ? Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0")) : Number.NaN;
  if (!Number.isSafeInteger(amount)) {
    refuse(
      `${at}.low_balance_naira`,
      `must be an amount of naira of at least 0, with at most 2 decimals, got ${describe(naira)}`,
    );
  }
  return amount;
}

/**
 * `commission`: per service (or `default`, every other service), either one commission or one per network,
 * disco or biller (with an optional `default` for the others); a commission is `{ bps: 0..10000 }` (basis
 * points of face value) or `{ fixed_kobo: N }`. Flattened to `service/network`, `service/*` and `*\/*`.
 */
function readCommission(value: unknown, at: string, refuse: Refuse): CommissionSchedule {
  const services = mappingAt(value, at, refuse);
  const schedule: CommissionSchedule = {};
  for (const [service, entry] of Object.entries(services)) {
    const label = `${at}.${service}`;
    if (service !== "default" && !isService(service)) {
      refuse(label, `is not a service; use one of ${serviceCodes.join(", ")} or default`);
    }
    const serviceKey = service === "default" ? "*" : service;
    const map = mappingAt(entry ?? undefined, label, refuse);
    if (isCommissionRule(map)) {
      schedule[`${serviceKey}/*`] = readCommissionRule(map, label, refuse);
      continue;
    }
    if (service === "default") refuse(label, "must be one commission ({ bps: N } or { fixed_kobo: N })");
    for (const [network, rule] of Object.entries(map)) {
      const ruleLabel = `${label}.${network}`;
      if (network !== "default" && !/^[a-z0-9]+$/.test(network)) {
        refuse(ruleLabel, "is not a network, disco or biller code (lower-case, like mtn, ikedc, dstv) or default");
      }
      const networkKey = network === "default" ? "*" : network;
      schedule[`${serviceKey}/${networkKey}`] = readCommissionRule(
        mappingAt(rule ?? undefined, ruleLabel, refuse),
        ruleLabel,
        refuse,
      );
    }
  }
  return schedule;
}

const isCommissionRule = (map: Record<string, unknown>): boolean => Object.hasOwn(map, "bps") || Object.hasOwn(map, "fixed_kobo");

function readCommissionRule(rule: Record<string, unknown>, at: string, refuse: Refuse): Commission {
  onlyKeys(rule, ["bps", "fixed_kobo"], at, refuse);
  const bps = own(rule, "bps");
  const fixed = own(rule, "fixed_kobo");
  if ((bps === undefined) === (fixed === undefined)) {
    refuse(at, "must hold exactly one of bps (basis points of face value) or fixed_kobo (kobo per order)");
  }
  if (bps !== undefined) return { bps: wholeNumber(bps, `${at}.bps`, 0, 0, 10_000, refuse) };
  return { fixedKobo: wholeNumber(fixed, `${at}.fixed_kobo`, 0, 0, Number.MAX_SAFE_INTEGER, refuse) };
}

/** `routes`: absent, every configured live provider carries every service (routes []). */
function readRoutes(value: unknown, configured: readonly string[], refuse: Refuse): ProviderRoute[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return refuse("routes", `must be a list, got ${describe(value)}`);
  const seen = new Map<string, number>();
  return value.map((item, index) => {
    const at = `routes[${index}]`;
    const route = readRoute(item, at, configured, refuse);
    const key = `${route.service}/${route.network ?? ""}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      refuse(at, `repeats routes[${earlier}] (${route.service} on ${route.network ?? "any network"})`);
    }
    seen.set(key, index);
    return route;
  });
}

function readRoute(value: unknown, at: string, configured: readonly string[], refuse: Refuse): ProviderRoute {
  const route = mappingAt(value, at, refuse);
  onlyKeys(route, ["service", "network", "providers"], at, refuse);
  const service = own(route, "service");
  if (!isService(service)) {
    refuse(`${at}.service`, `must be one of ${serviceCodes.join(", ")}, got ${describe(service)}`);
  }
  const network = own(route, "network");
  if (network !== undefined && (typeof network !== "string" || !/^[^\sA-Z]+$/.test(network))) {
    refuse(`${at}.network`, `must be a lower-case network, biller or disco code (mtn, dstv, ikedc), got ${describe(network)}`);
  }
  const providers = readRouteProviders(own(route, "providers"), `${at}.providers`, configured, refuse);
  return { service, ...(network === undefined ? {} : { network }), providers };
}

function readRouteProviders(value: unknown, at: string, configured: readonly string[], refuse: Refuse): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    refuse(at, `must be a non-empty list of providers configured under providers, got ${describe(value)}`);
  }
  const names: unknown[] = value;
  return names.map((name, index) => {
    const label = `${at}[${index}]`;
    if (typeof name !== "string" || !configured.includes(name)) {
      const known = configured.length > 0 ? configured.join(", ") : "none";
      refuse(label, `must be a provider configured under providers (configured: ${known}), got ${describe(name)}`);
    }
    if (names.indexOf(name) < index) refuse(label, `repeats ${name}, already at ${at}[${names.indexOf(name)}]`);
    return name;
  });
}

/** A whole number written as a YAML number or as text; absent or empty: the fallback. */
function wholeNumber(value: unknown, label: string, fallback: number, min: number, max: number, refuse: Refuse): number {
  if (value === undefined || value === "") return fallback;
  const number = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 0) {
    refuse(label, `must be a whole number, got ${describe(value)}`);
  }
  if (number < min || number > max) refuse(label, `must be between ${min} and ${max}, got ${number}`);
  return number;
}

/** Text as written; numbers are refused so that codes such as `007` or `1000.0` are quoted and kept exactly. */
function textAt(value: unknown, label: string, refuse: Refuse): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") refuse(label, `must be text (quote it), got ${describe(value)}`);
  return value;
}

function httpUrl(raw: string, label: string, refuse: Refuse): string {
  let protocol = "";
  try {
    protocol = new URL(raw).protocol;
  } catch {
    // Refused below with the value.
  }
  if (protocol !== "http:" && protocol !== "https:") refuse(label, `must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, "");
}

function onlyKeys(map: Record<string, unknown>, allowed: readonly string[], at: string, refuse: Refuse): void {
  for (const key of Object.keys(map)) {
    if (!allowed.includes(key)) refuse(at ? `${at}.${key}` : key, `is not a known key; allowed: ${allowed.join(", ")}`);
  }
}

function mappingAt(value: unknown, at: string, refuse: Refuse): Record<string, unknown> {
  if (!isMapping(value)) refuse(at, `must be a mapping, got ${describe(value)}`);
  return value;
}

function isService(value: unknown): value is ServiceCode {
  return serviceCodes.some((service) => service === value);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A key's value, own keys only; null (written `key:` with nothing after it) counts as absent. */
function own(map: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(map, key) && map[key] !== null ? map[key] : undefined;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return value.length === 0 ? "an empty list" : "a list";
  if (isMapping(value)) return "a mapping";
  return typeof value === "string" ? `"${value}"` : String(value);
}
