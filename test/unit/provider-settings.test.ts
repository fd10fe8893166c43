import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { ConfigError, type Env, type ProviderConfigs, readConfig } from "../../src/config.ts";
import { loadConfig } from "../../src/load-config.ts";
import { clubkonnectPlugin } from "../../src/providers/clubkonnect/plugin.ts";
import { readProviderSettings, type SettingsPlugin } from "../../src/providers/providers-file.ts";
import { sandboxPlugin } from "../../src/providers/sandbox/plugin.ts";
import { vtuPlugin } from "../../src/providers/vtu/plugin.ts";

let dir = "";
let written = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "provider-settings-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a providers file (text as is, anything else as YAML) into the test's temporary directory. */
function writeProvidersFile(content: string | object, extension = "yaml"): string {
  written += 1;
  const path = join(dir, `providers-${written}.${extension}`);
  writeFileSync(path, typeof content === "string" ? content : stringify(content));
  return path;
}

/** readProviderSettings with any plugins, through readConfig so that they get the service's own environment reader. */
function readSettings(env: Env, plugins: readonly SettingsPlugin[]): ReturnType<typeof readProviderSettings> {
  let settings: ReturnType<typeof readProviderSettings> | undefined;
  readConfig(env, {
    read: (environment, read) => {
      settings = readProviderSettings(environment, read, plugins);
      return { providers: settings.configs as ProviderConfigs, routing: settings.routing };
    },
    longestCall: () => undefined,
  });
  if (!settings) throw new Error("readConfig did not read the providers");
  return settings;
}

/** The ConfigError loadConfig throws for this file, its path replaced by <file>; fails the test when it is accepted. */
function refusal(content: string | object, env: Env = {}): { message: string; variable: string } {
  const path = writeProvidersFile(content);
  try {
    loadConfig({ ...env, PROVIDERS_FILE: path });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { message: error.message.replace(path, "<file>"), variable: error.variable.replace(path, "<file>") };
  }
  throw new Error(`the providers file was accepted: ${JSON.stringify(content)}`);
}

/** A live plugin like the VTU one: a URL that switches it on, a required secret, optional text and a timeout. */
function fakeLivePlugin(name: string): SettingsPlugin {
  const prefix = `${name.toUpperCase()}_`;
  return {
    name,
    mode: "live",
    envPrefix: prefix,
    readConfig(read) {
      const baseUrl = read.url(`${prefix}BASE_URL`);
      if (!baseUrl) return undefined;
      return {
        baseUrl,
        apiKey: read.secret(`${prefix}API_KEY`) ?? read.refuse(`${prefix}API_KEY`, `is required when ${prefix}BASE_URL is set`),
        account: read.text(`${prefix}ACCOUNT`, 3),
        timeoutMs: read.integer(`${prefix}TIMEOUT_MS`, 15_000, 100, 120_000),
      };
    },
  };
}

const vtuEntry = {
  base_url: "https://vtpass.example.test",
  api_key_env: "VTPASS_API_KEY",
  secret_key_env: "VTPASS_SECRET_KEY",
  callback_token_env: "VTPASS_CALLBACK_TOKEN",
  callback_secret_env: "VTPASS_CALLBACK_SECRET",
};
const vtuSecrets = {
  VTPASS_API_KEY: "file-api-key",
  VTPASS_SECRET_KEY: "file-secret-key",
  VTPASS_CALLBACK_TOKEN: "file-callback-token",
  VTPASS_CALLBACK_SECRET: "file-callback-secret",
};
/** The VTU plugin's own variables: with a providers file they must make no difference. */
const vtuVariables = {
  VTU_BASE_URL: "https://env.example.test",
  VTU_API_KEY: "env-api-key",
  VTU_SECRET_KEY: "env-secret-key",
  VTU_CALLBACK_TOKEN: "env-callback-token",
  VTU_CALLBACK_SECRET: "env-callback-secret",
  VTU_TIMEOUT_MS: "9000",
};
const defaultHealth = { breaker: { failures: 5, cooldownMs: 30_000 }, healthRefreshMs: 30_000, balanceCheckMs: 300_000 };

describe("provider settings without PROVIDERS_FILE", () => {
  test("each plugin reads its own variables and the routing is the default", () => {
    // The VTU variables alone configure it, and no file means no routes, codes or thresholds.
    const config = loadConfig(vtuVariables);
    expect(config.providers.vtu).toEqual({
      baseUrl: "https://env.example.test",
      apiKey: "env-api-key",
      secretKey: "env-secret-key",
      callbackToken: "env-callback-token",
      callbackSecret: "env-callback-secret",
      timeoutMs: 9000,
    });
    expect(config.routing).toEqual({
      file: undefined,
      routes: [],
      productCodes: {},
      lowBalanceKobo: {},
      commission: {},
      floatToleranceKobo: {},
      ...defaultHealth,
    });
  });
});

describe("the providers file (PROVIDERS_FILE)", () => {
  test("a full file: two live providers, their codes and thresholds, routes and health rules; the sandbox from its variables", () => {
    const path = writeProvidersFile(`
providers:
  alpha:
    base_url: https://alpha.example.test/
    api_key_env: ALPHA_SECRET
    account: "00123"
    timeout_ms: "8000"
    low_balance_naira: 1234.5
    products:
      mtn-data-1gb-7d: "1000.0"
      glo-data-5gb-30d: glo-5gb
  beta:
    base_url_env: BETA_URL
    api_key_env: BETA_SECRET
    low_balance_kobo: 99
routes:
  - service: data
    network: mtn
    providers: [alpha, beta]
  - service: electricity
    network: ikedc
    providers: [beta]
  - service: airtime
    providers: [beta, alpha]
breaker:
  failures: 3
  cooldown_seconds: 45
health_refresh_ms: 500
balance_check_seconds: 60
`);
    const env = {
      PROVIDERS_FILE: path,
      ALPHA_SECRET: "alpha-key",
      BETA_SECRET: "beta-key",
      BETA_URL: "https://beta.example.test",
      SANDBOX_LATENCY_MS: "123",
      // Alpha's own variables: ignored, since the file configures alpha.
      ALPHA_TIMEOUT_MS: "100",
      ALPHA_API_KEY: "env-key",
    };
    const { configs, routing } = readSettings(env, [sandboxPlugin, fakeLivePlugin("alpha"), fakeLivePlugin("beta")]);
    // Every value differs from its default, so each one shows it was read from the file (or the sandbox's variable).
    expect(configs.sandbox).toMatchObject({ latencyMs: 123 });
    expect(configs.alpha).toEqual({
      baseUrl: "https://alpha.example.test",
      apiKey: "alpha-key",
      account: "00123",
      timeoutMs: 8000,
    });
    expect(configs.beta).toEqual({
      baseUrl: "https://beta.example.test",
      apiKey: "beta-key",
      account: undefined,
      timeoutMs: 15_000,
    });
    expect(routing).toEqual({
      file: path,
      routes: [
        { service: "data", network: "mtn", providers: ["alpha", "beta"] },
        { service: "electricity", network: "ikedc", providers: ["beta"] },
        { service: "airtime", providers: ["beta", "alpha"] },
      ],
      productCodes: { alpha: { "mtn-data-1gb-7d": "1000.0", "glo-data-5gb-30d": "glo-5gb" } },
      lowBalanceKobo: { alpha: 123_450, beta: 99 },
      commission: {},
      floatToleranceKobo: {},
      breaker: { failures: 3, cooldownMs: 45_000 },
      healthRefreshMs: 500,
      balanceCheckMs: 60_000,
    });
  });

  test("providers.example.yaml reads, with its variables set, into the routing it documents", () => {
    const example = fileURLToPath(new URL("../../providers.example.yaml", import.meta.url));
    const env = { PROVIDERS_FILE: example, ...vtuSecrets, CLUBKONNECT_API_KEY: "ck-key" };
    const { configs, routing } = readSettings(env, [sandboxPlugin, vtuPlugin, clubkonnectPlugin]);
    expect(configs.vtu).toEqual({
      baseUrl: "https://vtpass.com",
      apiKey: "file-api-key",
      secretKey: "file-secret-key",
      callbackToken: "file-callback-token",
      callbackSecret: "file-callback-secret",
      timeoutMs: 15_000,
    });
    expect(configs.clubkonnect).toEqual({
      baseUrl: "https://www.nellobytesystems.com",
      userId: "CK100000001",
      apiKey: "ck-key",
      callbackUrl: "https://vend.example.com/callbacks/providers/clubkonnect",
      timeoutMs: 20_000,
    });
    expect(routing).toEqual({
      file: example,
      routes: [
        { service: "data", network: "mtn", providers: ["vtu", "clubkonnect"] },
        { service: "data", providers: ["vtu"] },
        { service: "airtime", providers: ["clubkonnect", "vtu"] },
        { service: "cable", providers: ["vtu"] },
        { service: "electricity", providers: ["vtu"] },
      ],
      productCodes: {
        vtu: { "mtn-data-1gb-7d": "mtn-1gb-7days", "mtn-data-2gb-30d": "mtn-2gb-30days", "glo-data-5gb-30d": "glo-5gb-30days" },
        clubkonnect: { "mtn-data-1gb-7d": "1000.0", "mtn-data-2gb-30d": "2000.0" },
      },
      lowBalanceKobo: { vtu: 5_000_000, clubkonnect: 2_500_000 },
      commission: {
        vtu: {
          "airtime/mtn": { bps: 300 },
          "airtime/*": { bps: 250 },
          "data/*": { bps: 200 },
          "electricity/*": { fixedKobo: 10_000 },
          "*/*": { bps: 100 },
        },
        clubkonnect: { "airtime/*": { bps: 350 }, "data/mtn": { bps: 400 } },
      },
      floatToleranceKobo: { vtu: 100 },
      ...defaultHealth,
    });
  });

  test("through loadConfig: the file's vtu wins over its variables, a relative path is resolved, no routes means routes []", () => {
    const path = writeProvidersFile({ providers: { vtu: { ...vtuEntry, timeout_ms: 12_000 } } });
    const config = loadConfig({ ...vtuVariables, ...vtuSecrets, PROVIDERS_FILE: relative(process.cwd(), path) });
    // The variables hold other values (env-*, 9000): these can only have come from the file.
    expect(config.providers.vtu).toEqual({
      baseUrl: "https://vtpass.example.test",
      apiKey: "file-api-key",
      secretKey: "file-secret-key",
      callbackToken: "file-callback-token",
      callbackSecret: "file-callback-secret",
      timeoutMs: 12_000,
    });
    expect(config.routing).toEqual({
      file: path,
      routes: [],
      productCodes: {},
      lowBalanceKobo: {},
      commission: {},
      floatToleranceKobo: {},
      ...defaultHealth,
    });
  });

  test("a JSON file reads the same as YAML", () => {
    const document = {
      providers: { vtu: { ...vtuEntry, products: { "mtn-data-1gb-7d": "mtn-1gb" } } },
      routes: [{ service: "data", providers: ["vtu"] }],
      breaker: { failures: 7 },
    };
    const path = writeProvidersFile(JSON.stringify(document, null, 2), "json");
    const config = loadConfig({ ...vtuSecrets, PROVIDERS_FILE: path });
    expect(config.providers.vtu?.apiKey).toBe("file-api-key");
    expect(config.routing).toMatchObject({
      file: path,
      routes: [{ service: "data", providers: ["vtu"] }],
      productCodes: { vtu: { "mtn-data-1gb-7d": "mtn-1gb" } },
      breaker: { failures: 7, cooldownMs: 30_000 },
    });
  });

  test("a live provider the file leaves out is not configured, even with its variables set; the sandbox still reads its own", () => {
    const path = writeProvidersFile({ providers: {} });
    // Without the file these variables configure vtu (first test): undefined here shows they were ignored.
    const config = loadConfig({ ...vtuVariables, SANDBOX_LATENCY_MS: "77", PROVIDERS_FILE: path });
    expect(config.providers.vtu).toBeUndefined();
    expect(config.providers.sandbox.latencyMs).toBe(77);
    expect(config.routing.file).toBe(path);
  });

  test("settings given as <key>_env are read from the variable it names", () => {
    const entry = { ...vtuEntry, base_url: undefined, base_url_env: "VTPASS_URL", timeout_ms_env: "VTPASS_TIMEOUT" };
    const path = writeProvidersFile({ providers: { vtu: entry } });
    const env = { ...vtuSecrets, VTPASS_URL: "https://from-env.example.test/", VTPASS_TIMEOUT: "7000", PROVIDERS_FILE: path };
    expect(loadConfig(env).providers.vtu).toMatchObject({ baseUrl: "https://from-env.example.test", timeoutMs: 7000 });
  });

  test("the file's provider timeout drives the worker lease check", () => {
    const path = writeProvidersFile({ providers: { vtu: { ...vtuEntry, timeout_ms: 30_000 } } });
    // 2 × 30 s + 5 s exceeds the default 60 s lease; with the variables' 9000 alone it would pass.
    expect(() => loadConfig({ ...vtuVariables, ...vtuSecrets, PROVIDERS_FILE: path })).toThrow(
      /WORKER_LEASE_SECONDS must be at least 65/,
    );
  });

  test("each error is a ConfigError whose variable names the file and the entry", () => {
    const { message, variable } = refusal({ providers: { vtu: { ...vtuEntry, timeout_ms: 5 } } }, vtuSecrets);
    expect(variable).toBe("PROVIDERS_FILE <file>: providers.vtu.timeout_ms");
    expect(message).toBe(
      "Invalid configuration: PROVIDERS_FILE <file>: providers.vtu.timeout_ms must be between 100 and 120000, got 5",
    );
  });

  const vtu = (settings: object) => ({ providers: { vtu: { ...vtuEntry, ...settings } } });
  const withRoutes = (routes: unknown) => ({ ...vtu({}), routes });

  // Each case is refused with exactly this message (after "PROVIDERS_FILE <file>: "); an accepted file fails the test.
  test.each<[string, object, string]>([
    ["a timeout that is no number", vtu({ timeout_ms: "fast" }), 'providers.vtu.timeout_ms must be a whole number, got "fast"'],
    ["a fractional timeout", vtu({ timeout_ms: 150.5 }), "providers.vtu.timeout_ms must be a whole number, got 150.5"],
    [
      "a base URL that is not http(s)",
      vtu({ base_url: "ftp://x.test" }),
      'providers.vtu.base_url must be an http(s) URL, got "ftp://x.test"',
    ],
    ["a base URL written as a number", vtu({ base_url: 42 }), "providers.vtu.base_url must be text (quote it), got 42"],
    [
      "a secret written in the file",
      vtu({ api_key: "abc", api_key_env: undefined }),
      "providers.vtu.api_key must be given as api_key_env, the name of an environment variable (secrets stay out of the file)",
    ],
    [
      "a secret's variable name that is no variable name",
      vtu({ api_key_env: "my key" }),
      'providers.vtu.api_key_env must name an environment variable, got "my key"',
    ],
    [
      "a secret not given at all",
      vtu({ secret_key_env: undefined }),
      "providers.vtu.secret_key_env is required when base_url is set",
    ],
    [
      "a setting given twice",
      vtu({ base_url_env: "VTPASS_URL" }),
      "providers.vtu.base_url is also given as base_url_env; keep one",
    ],
    [
      "a setting the plugin never reads",
      vtu({ bse_url: "https://typo.test" }),
      "providers.vtu.bse_url is an unknown setting (vtu reads: base_url, api_key_env, secret_key_env, callback_token_env, " +
        "callback_secret_env, timeout_ms, products, low_balance_naira, low_balance_kobo, commission, float_tolerance_kobo)",
    ],
    [
      "an entry that configures nothing",
      { providers: { vtu: { bse_url: "https://typo.test" } } },
      "providers.vtu configures nothing (vtu looked for base_url and found no value)",
    ],
    ["an entry that is no mapping", { providers: { vtu: "on" } }, 'providers.vtu must be a mapping, got "on"'],
    [
      "a provider that does not exist",
      { providers: { vtux: vtuEntry } },
      "providers.vtux is not a live provider; the live providers are: vtu, clubkonnect",
    ],
    [
      "the test-mode sandbox",
      { providers: { sandbox: { latency_ms: 5 } } },
      "providers.sandbox is not a live provider (sandbox is a test-mode provider, read from its SANDBOX_ variables); " +
        "the live providers are: vtu, clubkonnect",
    ],
    [
      "an unknown top-level key",
      { ...vtu({}), routing: [] },
      "routing is not a known key; allowed: providers, routes, breaker, health_refresh_ms, balance_check_seconds",
    ],
    ["providers as a list", { providers: ["vtu"] }, "providers must be a mapping, got a list"],
    ["products as a list", vtu({ products: ["x"] }), "providers.vtu.products must be a mapping, got a list"],
    [
      "a product code written as a number",
      vtu({ products: { "mtn-data-1gb-7d": 1000 } }),
      "providers.vtu.products.mtn-data-1gb-7d must be the provider's product code, text of 1 to 64 characters, got 1000",
    ],
    [
      "an empty product code",
      vtu({ products: { "mtn-data-1gb-7d": "" } }),
      `providers.vtu.products.mtn-data-1gb-7d must be the provider's product code, text of 1 to 64 characters, got ""`,
    ],
    [
      "a product code over 64 characters",
      vtu({ products: { "mtn-data-1gb-7d": "x".repeat(65) } }),
      `providers.vtu.products.mtn-data-1gb-7d must be the provider's product code, text of 1 to 64 characters, got "${"x".repeat(65)}"`,
    ],
    [
      "both low-balance forms",
      vtu({ low_balance_naira: 10, low_balance_kobo: 1000 }),
      "providers.vtu.low_balance_kobo cannot be given with low_balance_naira; keep one",
    ],
    [
      "a naira threshold with three decimals",
      vtu({ low_balance_naira: 10.505 }),
      "providers.vtu.low_balance_naira must be an amount of naira of at least 0, with at most 2 decimals, got 10.505",
    ],
    [
      "a negative naira threshold",
      vtu({ low_balance_naira: -1 }),
      "providers.vtu.low_balance_naira must be an amount of naira of at least 0, with at most 2 decimals, got -1",
    ],
    [
      "a fractional kobo threshold",
      vtu({ low_balance_kobo: 1.5 }),
      "providers.vtu.low_balance_kobo must be a whole number, got 1.5",
    ],
    ["routes as a mapping", withRoutes({ data: ["vtu"] }), "routes must be a list, got a mapping"],
    [
      "a route without a service",
      withRoutes([{ providers: ["vtu"] }]),
      "routes[0].service must be one of airtime, data, cable, electricity, got nothing",
    ],
    [
      "a route for no known service",
      withRoutes([{ service: "tv", providers: ["vtu"] }]),
      'routes[0].service must be one of airtime, data, cable, electricity, got "tv"',
    ],
    [
      "an upper-case network",
      withRoutes([{ service: "data", network: "MTN", providers: ["vtu"] }]),
      'routes[0].network must be a lower-case network, biller or disco code (mtn, dstv, ikedc), got "MTN"',
    ],
    [
      "an empty network",
      withRoutes([{ service: "cable", network: "", providers: ["vtu"] }]),
      'routes[0].network must be a lower-case network, biller or disco code (mtn, dstv, ikedc), got ""',
    ],
    [
      "a route with no providers",
      withRoutes([{ service: "data", providers: [] }]),
      "routes[0].providers must be a non-empty list of providers configured under providers, got an empty list",
    ],
    [
      "a route naming a provider not configured",
      withRoutes([
        { service: "data", providers: ["vtu"] },
        { service: "airtime", providers: ["vtu", "clubkonnect"] },
      ]),
      'routes[1].providers[1] must be a provider configured under providers (configured: vtu), got "clubkonnect"',
    ],
    [
      "a route naming a provider twice",
      withRoutes([{ service: "data", providers: ["vtu", "vtu"] }]),
      "routes[0].providers[1] repeats vtu, already at routes[0].providers[0]",
    ],
    [
      "a route repeated",
      withRoutes([
        { service: "airtime", providers: ["vtu"] },
        { service: "data", network: "mtn", providers: ["vtu"] },
        { service: "data", providers: ["vtu"] },
        { service: "data", network: "mtn", providers: ["vtu"] },
      ]),
      "routes[3] repeats routes[1] (data on mtn)",
    ],
    [
      "a route for every network repeated",
      withRoutes([
        { service: "data", providers: ["vtu"] },
        { service: "data", providers: ["vtu"] },
      ]),
      "routes[1] repeats routes[0] (data on any network)",
    ],
    [
      "an unknown key in a route",
      withRoutes([{ service: "data", provider: "vtu" }]),
      "routes[0].provider is not a known key; allowed: service, network, providers",
    ],
    [
      "a breaker that never opens",
      { ...vtu({}), breaker: { failures: 0 } },
      "breaker.failures must be between 1 and 1000, got 0",
    ],
    [
      "a breaker cooldown over a day",
      { ...vtu({}), breaker: { cooldown_seconds: 100_000 } },
      "breaker.cooldown_seconds must be between 1 and 86400, got 100000",
    ],
    [
      "an unknown breaker key",
      { ...vtu({}), breaker: { cooldown_ms: 100 } },
      "breaker.cooldown_ms is not a known key; allowed: failures, cooldown_seconds",
    ],
    [
      "a health refresh too frequent",
      { ...vtu({}), health_refresh_ms: 50 },
      "health_refresh_ms must be between 100 and 60000, got 50",
    ],
    [
      "a balance check too frequent",
      { ...vtu({}), balance_check_seconds: 5 },
      "balance_check_seconds must be between 10 and 86400, got 5",
    ],
    [
      "a commission for an unknown service",
      vtu({ commission: { power: { bps: 10 } } }),
      "providers.vtu.commission.power is not a service; use one of airtime, data, cable, electricity or default",
    ],
    [
      "a commission with both bps and fixed_kobo",
      vtu({ commission: { airtime: { bps: 10, fixed_kobo: 5 } } }),
      "providers.vtu.commission.airtime must hold exactly one of bps (basis points of face value) or fixed_kobo (kobo per order)",
    ],
    [
      "a commission over 100%",
      vtu({ commission: { airtime: { mtn: { bps: 10_001 } } } }),
      "providers.vtu.commission.airtime.mtn.bps must be between 0 and 10000, got 10001",
    ],
    [
      "a fractional fixed commission",
      vtu({ commission: { electricity: { fixed_kobo: 1.5 } } }),
      "providers.vtu.commission.electricity.fixed_kobo must be a whole number, got 1.5",
    ],
    [
      "a network commission that is no mapping",
      vtu({ commission: { data: { glo: 300 } } }),
      "providers.vtu.commission.data.glo must be a mapping, got 300",
    ],
    [
      "an unknown key in a commission",
      vtu({ commission: { data: { glo: { percent: 3 } } } }),
      "providers.vtu.commission.data.glo.percent is not a known key; allowed: bps, fixed_kobo",
    ],
    [
      "a network code in capitals",
      vtu({ commission: { data: { MTN: { bps: 3 } } } }),
      "providers.vtu.commission.data.MTN is not a network, disco or biller code (lower-case, like mtn, ikedc, dstv) or default",
    ],
    [
      "a default commission given per network",
      vtu({ commission: { default: { mtn: { bps: 3 } } } }),
      "providers.vtu.commission.default must be one commission ({ bps: N } or { fixed_kobo: N })",
    ],
    [
      "a negative float tolerance",
      vtu({ float_tolerance_kobo: -1 }),
      "providers.vtu.float_tolerance_kobo must be a whole number, got -1",
    ],
  ])("%s is refused, naming the entry", (_, document, problem) => {
    expect(refusal(document, vtuSecrets).message).toBe(`Invalid configuration: PROVIDERS_FILE <file>: ${problem}`);
  });

  test("a secret whose variable is unset or empty: the plugin's own message, naming the entry and the variable", () => {
    const { VTPASS_API_KEY: _, ...withoutApiKey } = vtuSecrets;
    const expected =
      "Invalid configuration: PROVIDERS_FILE <file>: providers.vtu.api_key_env (VTPASS_API_KEY) is required when base_url is set";
    expect(refusal(vtu({}), withoutApiKey).message).toBe(expected);
    expect(refusal(vtu({}), { ...vtuSecrets, VTPASS_API_KEY: "" }).message).toBe(expected);
  });

  test("a non-secret setting's variable holding a bad value names the entry and the variable", () => {
    const document = vtu({ timeout_ms_env: "VTPASS_TIMEOUT" });
    expect(refusal(document, { ...vtuSecrets, VTPASS_TIMEOUT: "soon" }).message).toBe(
      'Invalid configuration: PROVIDERS_FILE <file>: providers.vtu.timeout_ms_env (VTPASS_TIMEOUT) must be a whole number, got "soon"',
    );
  });

  test("an unknown provider name lists every live plugin, not the test-mode ones", () => {
    const path = writeProvidersFile({ providers: { gamma: {} } });
    const plugins = [sandboxPlugin, fakeLivePlugin("alpha"), fakeLivePlugin("beta")];
    expect(() => readSettings({ PROVIDERS_FILE: path }, plugins)).toThrow(
      `Invalid configuration: PROVIDERS_FILE ${path}: providers.gamma is not a live provider; the live providers are: alpha, beta`,
    );
  });

  test("a key written twice is refused with the parser's line and column", () => {
    const text = "providers:\n  vtu:\n    base_url: https://a.example.test\n    base_url: https://b.example.test\n";
    expect(refusal(text).message).toBe(
      "Invalid configuration: PROVIDERS_FILE <file> is not valid YAML: Map keys must be unique at line 4, column 5",
    );
  });

  test("text that is not YAML is refused with the parser's line and column, and no excerpt of the file", () => {
    const { message } = refusal("providers:\n  vtu: [base_url\nroutes: []\n");
    expect(message).toStartWith("Invalid configuration: PROVIDERS_FILE <file> is not valid YAML: ");
    expect(message).toMatch(/at line \d+, column \d+$/);
  });

  test.each<[string, string]>([
    ["an empty file", ""],
    ["a list", "- vtu\n"],
  ])("%s is refused: the file must hold a mapping", (_, text) => {
    expect(refusal(text).message).toBe(
      "Invalid configuration: PROVIDERS_FILE <file> must hold a mapping with the keys providers, routes, breaker, " +
        "health_refresh_ms, balance_check_seconds",
    );
  });

  test("a missing file is refused, naming PROVIDERS_FILE and the path", () => {
    const path = join(dir, "absent.yaml");
    expect(() => loadConfig({ PROVIDERS_FILE: path })).toThrow(
      `Invalid configuration: PROVIDERS_FILE ${path} cannot be read (ENOENT: no such file or directory)`,
    );
  });
});
