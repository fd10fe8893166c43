import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";

describe("configuration", () => {
  test("defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      maxWaitSeconds: 25,
      requestTimeoutSeconds: 30,
      dataDir: "./.data",
      databaseUrl: undefined,
    });
  });

  test.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["MAX_WAIT_SECONDS", "-1"],
    ["REQUEST_TIMEOUT_SECONDS", "1.5"],
    ["DATABASE_URL", "mysql://localhost/x"],
    ["ADMIN_TOKEN", "short"],
    ["CURSOR_SECRET", "too-short"],
    ["LOG_LEVEL", "loud"],
  ])("a bad %s=%s names the variable", (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(variable);
  });
});
