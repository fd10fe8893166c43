import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config.ts";
import { loadConfig } from "../../src/load-config.ts";

const postgresUrl = "postgres://postgres@db.internal:5432/vend";

describe("webhook configuration", () => {
  test.each([
    [{}, "test"],
    [{ WEBHOOK_ALLOW_PRIVATE_URLS: "" }, "test"],
    [{ DATABASE_URL: postgresUrl }, false],
    [{ DATABASE_URL: postgresUrl, WEBHOOK_ALLOW_PRIVATE_URLS: "" }, false],
    [{ DATABASE_URL: postgresUrl, WEBHOOK_ALLOW_PRIVATE_URLS: "test" }, "test"],
    [{ DATABASE_URL: postgresUrl, WEBHOOK_ALLOW_PRIVATE_URLS: "true" }, true],
    [{ DATABASE_URL: postgresUrl, WEBHOOK_ALLOW_PRIVATE_URLS: "1" }, true],
    [{ WEBHOOK_ALLOW_PRIVATE_URLS: "true" }, true],
    [{ WEBHOOK_ALLOW_PRIVATE_URLS: "false" }, false],
    [{ WEBHOOK_ALLOW_PRIVATE_URLS: "0" }, false],
    [{ WEBHOOK_ALLOW_PRIVATE_URLS: "test" }, "test"],
  ] as const)("%o allows private URLs: %p", (env, allowed) => {
    expect(loadConfig(env).webhooks.allowPrivateUrls).toBe(allowed);
  });

  test("delivery concurrency defaults and overrides", () => {
    expect(loadConfig({}).webhooks).toMatchObject({ concurrency: 32, endpointConcurrency: 2 });
    const set = loadConfig({ WEBHOOK_CONCURRENCY: "8", WEBHOOK_ENDPOINT_CONCURRENCY: "3" }).webhooks;
    expect(set).toMatchObject({ concurrency: 8, endpointConcurrency: 3 });
  });

  test.each([
    ["WEBHOOK_CONCURRENCY", "0"],
    ["WEBHOOK_CONCURRENCY", "many"],
    ["WEBHOOK_ENDPOINT_CONCURRENCY", "0"],
    ["WEBHOOK_ALLOW_PRIVATE_URLS", "yes"],
    ["WEBHOOK_ALLOW_PRIVATE_URLS", "TEST"],
    ["WEBHOOK_ALLOW_PRIVATE_URLS", "live"],
  ])("a bad %s=%s names the variable", (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(variable);
  });

  test("a per-endpoint cap above the pool size is refused", () => {
    expect(() => loadConfig({ WEBHOOK_CONCURRENCY: "4", WEBHOOK_ENDPOINT_CONCURRENCY: "5" })).toThrow(
      "WEBHOOK_ENDPOINT_CONCURRENCY",
    );
  });
});
