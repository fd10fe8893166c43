import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fundedAccount } from "../helpers/accounts.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { cliEnv, closedPort, freshConfigDir, removeConfigDirs, runCli, runJson } from "./cli.ts";

let server: TestServer;
const accounts: { testKey: string; balance: number }[] = [];

beforeAll(async () => {
  server = await startTestServer();
  for (const kobo of [10_000, 20_000, 30_000]) {
    const account = await fundedAccount(server, kobo, `precedence-${kobo}`);
    accounts.push({ testKey: account.testKey, balance: kobo });
  }
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

const account = (i: number) => {
  const found = accounts[i];
  if (!found) throw new Error(`no account ${i}`);
  return found;
};

function writeProfiles(dir: string, profiles: Record<string, Record<string, string>>): void {
  writeFileSync(join(dir, "config.json"), JSON.stringify({ profiles }));
}

const balanceWith = async (args: string[], env: Record<string, string | undefined>) =>
  (await runJson<{ balance_kobo: number }>(["wallet", "balance", ...args], env)).balance_kobo;

describe("configuration precedence: flag > environment > profile", () => {
  test("the API key", async () => {
    const dir = freshConfigDir();
    writeProfiles(dir, { default: { baseUrl: server.url, apiKey: account(0).testKey } });
    expect(await balanceWith([], cliEnv({ VENDCTL_CONFIG_DIR: dir }))).toBe(account(0).balance);
    const env = cliEnv({ VENDCTL_CONFIG_DIR: dir, VENDCTL_API_KEY: account(1).testKey });
    expect(await balanceWith([], env)).toBe(account(1).balance);
    expect(await balanceWith(["--api-key", account(2).testKey], env)).toBe(account(2).balance);
  });

  test("the base URL", async () => {
    const dir = freshConfigDir();
    const closed = `http://127.0.0.1:${closedPort()}`;
    writeProfiles(dir, { default: { baseUrl: closed, apiKey: account(0).testKey } });
    expect((await runCli(["wallet", "balance"], cliEnv({ VENDCTL_CONFIG_DIR: dir }))).code).toBe(3);
    const env = cliEnv({ VENDCTL_CONFIG_DIR: dir, VENDCTL_BASE_URL: server.url });
    expect(await balanceWith([], env)).toBe(account(0).balance);
    const flagged = await runCli(["wallet", "balance", "--base-url", closed], env);
    expect(flagged.code).toBe(3);
    expect(flagged.stderr).toContain(closed);
  });

  test("--profile picks a named profile; an unknown one is a usage error", async () => {
    const dir = freshConfigDir();
    writeProfiles(dir, {
      default: { baseUrl: server.url, apiKey: account(0).testKey },
      qa: { baseUrl: server.url, apiKey: account(2).testKey },
    });
    const env = cliEnv({ VENDCTL_CONFIG_DIR: dir });
    expect(await balanceWith(["--profile", "qa"], env)).toBe(account(2).balance);
    expect(await balanceWith([], { ...env, VENDCTL_PROFILE: "qa" })).toBe(account(2).balance);
    const unknown = await runCli(["wallet", "balance", "--profile", "nope"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no profile "nope"');
  });

  test("without any API key: a usage error naming the ways to give one", async () => {
    const result = await runCli(["wallet", "balance"], cliEnv({ VENDCTL_BASE_URL: server.url }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("no API key");
  });
});

describe("vendctl login (non-interactive: values from flags)", () => {
  test("checks the values against the API and writes the profile, readable only by the user", async () => {
    const env = cliEnv();
    const dir = env.VENDCTL_CONFIG_DIR ?? "";
    const args = ["login", "--base-url", server.url, "--api-key", account(1).testKey, "--admin-token", testAdminToken];
    const shown = await runJson<{ profile: string; key_mode: string; admin_token: string }>(args, env);
    expect(shown).toMatchObject({ profile: "default", key_mode: "test", admin_token: "checked" });
    const path = join(dir, "config.json");
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      profiles: { default: { baseUrl: server.url, apiKey: account(1).testKey, adminToken: testAdminToken } },
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(await balanceWith([], cliEnv({ VENDCTL_CONFIG_DIR: dir }))).toBe(account(1).balance);
    const admin = await runCli(["accounts", "list", "--limit", "1", "--json"], cliEnv({ VENDCTL_CONFIG_DIR: dir }));
    expect(admin.code).toBe(0);
  });

  test("a named profile is added next to the others", async () => {
    const env = cliEnv();
    await runJson(["login", "--base-url", server.url, "--api-key", account(0).testKey], env);
    await runJson(["login", "--profile", "second", "--base-url", server.url, "--api-key", account(2).testKey], env);
    const file = JSON.parse(readFileSync(join(env.VENDCTL_CONFIG_DIR ?? "", "config.json"), "utf8"));
    expect(Object.keys(file.profiles)).toEqual(["default", "second"]);
    expect(await balanceWith(["--profile", "second"], env)).toBe(account(2).balance);
  });

  test("a wrong key is refused with the API's message and nothing is written", async () => {
    const env = cliEnv();
    const result = await runCli(["login", "--base-url", server.url, "--api-key", `rg_test_${"x".repeat(40)}`], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toStartWith("UNAUTHENTICATED: ");
    const wrongToken = await runCli(["login", "--base-url", server.url, "--admin-token", "wrong-token-wrong-token"], env);
    expect(wrongToken.code).toBe(1);
    expect(() => readFileSync(join(env.VENDCTL_CONFIG_DIR ?? "", "config.json"))).toThrow();
  });

  test("an unreachable server: exit 3", async () => {
    const result = await runCli(["login", "--base-url", `http://127.0.0.1:${closedPort()}`], cliEnv());
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("cannot reach");
  });
});
