import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config.ts";
import { loadConfig } from "../../src/load-config.ts";

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

  test("a transaction pooler needs a direct URL for LISTEN and migrations; session mode is plain", () => {
    const pooled = { DATABASE_URL: "postgres://u@bouncer:6432/vend", DATABASE_POOLER: "transaction" };
    expect(() => loadConfig(pooled)).toThrow("DATABASE_DIRECT_URL");
    expect(() => loadConfig({ DATABASE_POOLER: "transaction" })).toThrow("DATABASE_POOLER");
    expect(() => loadConfig({ DATABASE_DIRECT_URL: "postgres://u@db/vend" })).toThrow("DATABASE_DIRECT_URL");
    const config = loadConfig({
      ...pooled,
      DATABASE_DIRECT_URL: "postgres://u@h1:5432,h2:5432/vend?target_session_attrs=primary",
    });
    expect(config).toMatchObject({ databasePooler: "transaction", databaseDirectUrl: expect.stringContaining("h2:5432") });
    expect(loadConfig({ ...pooled, DATABASE_POOLER: "session" }).databasePooler).toBe("none");
    expect(loadConfig({}).databasePooler).toBe("none");
  });

  test.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["MAX_WAIT_SECONDS", "-1"],
    ["REQUEST_TIMEOUT_SECONDS", "1.5"],
    ["DATABASE_URL", "mysql://localhost/x"],
    ["DATABASE_URL", "postgres://h1:5432,h2:5433/db?target_session_attrs=read-write"],
    ["DATABASE_URL", "postgres://h1:99999/db"],
    ["DATABASE_POOLER", "statement"],
    ["DATABASE_DIRECT_URL", "http://x/db"],
    ["ADMIN_TOKEN", "short"],
    ["CURSOR_SECRET", "too-short"],
    ["LOG_LEVEL", "loud"],
  ])("a bad %s=%s names the variable", (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(variable);
  });

  describe("worker leases and re-sends", () => {
    const vtu = {
      VTU_BASE_URL: "https://vtu.example.test",
      VTU_API_KEY: "api-key",
      VTU_SECRET_KEY: "secret-key",
      VTU_CALLBACK_TOKEN: "callback-token",
      VTU_CALLBACK_SECRET: "callback-secret",
    };

    test("the defaults are valid, with and without the live provider", () => {
      expect(loadConfig({}).worker).toMatchObject({ leaseSeconds: 60, maxSends: 3, maxResendAgeSeconds: 3600 });
      expect(loadConfig(vtu).worker.leaseSeconds).toBeGreaterThanOrEqual((2 * 15_000 + 5000) / 1000);
    });

    test.each([
      ["a lease shorter than a re-query plus a send at the default timeout", { WORKER_LEASE_SECONDS: "30" }],
      ["the drill: a 2 s lease, an 8 s provider timeout", { WORKER_LEASE_SECONDS: "2", VTU_TIMEOUT_MS: "8000" }],
      ["a provider timeout the default lease cannot cover", { VTU_TIMEOUT_MS: "30000" }],
    ])("%s is refused, naming WORKER_LEASE_SECONDS", (_, env) => {
      expect(() => loadConfig({ ...vtu, ...env })).toThrow(ConfigError);
      expect(() => loadConfig({ ...vtu, ...env })).toThrow(/WORKER_LEASE_SECONDS must be at least \d+/);
    });

    test("a lease of twice the provider timeout plus 5 s is enough; the sandbox alone needs no minimum", () => {
      expect(loadConfig({ ...vtu, WORKER_LEASE_SECONDS: "21", VTU_TIMEOUT_MS: "8000" }).worker.leaseSeconds).toBe(21);
      expect(loadConfig({ WORKER_LEASE_SECONDS: "2", SANDBOX_LATENCY_MS: "150" }).worker.leaseSeconds).toBe(2);
    });

    test.each([
      ["WORKER_MAX_SENDS", "0"],
      ["WORKER_MAX_SENDS", "three"],
      ["WORKER_MAX_RESEND_AGE_SECONDS", "0"],
      ["WORKER_MAX_RESEND_AGE_SECONDS", "-5"],
    ])("a bad %s=%s names the variable", (variable, value) => {
      expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [variable]: value })).toThrow(variable);
    });
  });
});
