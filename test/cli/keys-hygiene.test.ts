import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { components } from "../../generated/openapi-types.ts";
import { cliEnv, cliServer, runCli, runJson } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type Schemas = components["schemas"];

const cli = cliServer({ account: { name: "key-hygiene", kobo: 0 }, env: { TERM: "xterm" } });
const admin = () => cli.adminEnv();

async function newKey(...flags: string[]): Promise<Schemas["ApiKeyCreated"]> {
  return runJson<Schemas["ApiKeyCreated"]>(["keys", "create", cli.account.id, "--mode", "test", ...flags], admin());
}

/** An environment whose active profile holds `key` (and the server's URL), as `vendctl login` leaves it. */
async function profileWith(key: string) {
  const env = cliEnv({ TERM: "xterm" });
  for (const [setting, value] of [
    ["base_url", cli.server.url],
    ["api_key", key],
  ]) {
    const set = await runCli(["config", "set", setting ?? "", value ?? ""], env);
    if (set.code !== 0) throw new Error(set.stderr);
  }
  return env;
}

const savedKey = (env: Record<string, string | undefined>): string | undefined =>
  JSON.parse(readFileSync(join(env.VENDCTL_CONFIG_DIR ?? "", "config.json"), "utf8")).profiles.default.apiKey;

describe("keys create with an expiry and an allow-list", () => {
  test("--allow-ip (repeatable) and --expires-at reach the key", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const key = await newKey("--allow-ip", "10.1.2.3/8", "--allow-ip", "::1", "--expires-at", expiresAt);
    expect(key.allowed_ips).toEqual(["10.0.0.0/8", "::1/128"]);
    expect(key.expires_at).toBe(expiresAt);
  });

  test("a bad --expires-at is a usage error before anything is sent; a bad address is the API's 400 naming it", async () => {
    const before = (await runJson<unknown[]>(["keys", "list", cli.account.id], admin())).length;
    const badTime = await runCli(["keys", "create", cli.account.id, "--mode", "test", "--expires-at", "tomorrow"], admin());
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toContain("RFC 3339");
    const badIp = await runCli(["keys", "create", cli.account.id, "--mode", "test", "--allow-ip", "10.0.0.300"], admin());
    expect(badIp.code).not.toBe(0);
    expect(badIp.stderr).toContain("allowed_ips[0]");
    expect((await runJson<unknown[]>(["keys", "list", cli.account.id], admin())).length).toBe(before);
  });
});

describe("auth status shows the key's account, expiry and allow-list", () => {
  test("from GET /api/v1/keys, in JSON and in the table", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const key = await newKey("--allow-ip", "127.0.0.1", "--allow-ip", "::1", "--expires-at", expiresAt);
    const env = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: key.key });
    const status = await runJson<{ api_key: Record<string, unknown> }>(["auth", "status"], env);
    expect(status.api_key).toMatchObject({
      valid: true,
      account_id: cli.account.id,
      key_id: key.id,
      expires_at: expiresAt,
      allowed_ips: ["127.0.0.1/32", "::1/128"],
    });
    const table = await runCli(["auth", "status", "--table"], env);
    expect(table.stdout).toContain(`account ${cli.account.id}, expires ${expiresAt}, only from 127.0.0.1/32 ::1/128`);
  });
});

describe("keys list with an API key", () => {
  test("lists the account's keys of the key's mode and marks the one in use", async () => {
    const key = await newKey("--allow-ip", "127.0.0.1");
    const env = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: key.key });
    const keys = await runJson<Schemas["ApiKey"][]>(["keys", "list"], env);
    expect(keys.every((k) => k.mode === "test")).toBe(true);
    expect(keys.filter((k) => k.current).map((k) => k.id)).toEqual([key.id]);
    const table = await runCli(["keys", "list", "--table"], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^\\*\\s+${key.id}.*127\\.0\\.0\\.1/32`, "m"));
    expect(table.stdout).not.toContain(key.key);
  });
});

describe("keys roll", () => {
  test("--save puts the new key in the profile; the old one keeps working through the grace", async () => {
    const old = await newKey();
    const env = await profileWith(old.key);
    const result = await runCli(["keys", "roll", "--grace", "10m", "--save", "--json"], env);
    expect(result.code).toBe(0);
    const rolled = JSON.parse(result.stdout) as Schemas["ApiKeyRolled"];
    expect(rolled.key.rolled_from).toBe(old.id);
    expect(Date.parse(rolled.previous.expires_at ?? "") - Date.now()).toBeGreaterThan(500_000);
    expect(result.stderr).toContain("shown only once");
    expect(result.stderr).toContain(`Saved the new key in profile "default"`);
    expect(savedKey(env)).toBe(rolled.key.key);
    expect((await runCli(["wallet", "balance", "--json"], env)).code).toBe(0);
    const oldEnv = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: old.key });
    expect((await runCli(["wallet", "balance", "--json"], oldEnv)).code).toBe(0);
  });

  test("without a terminal and without --save the profile keeps the old key, and says so", async () => {
    const old = await newKey();
    const env = await profileWith(old.key);
    const result = await runCli(["keys", "roll", "--grace", "0", "--yes"], env);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("Not saved");
    expect(savedKey(env)).toBe(old.key);
  });

  test("a grace over 24h is a usage error and nothing is rolled", async () => {
    const old = await newKey();
    const env = await profileWith(old.key);
    const result = await runCli(["keys", "roll", "--grace", "25h"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("at most 24h");
    const keys = await runJson<Schemas["ApiKey"][]>(["keys", "list"], env);
    expect(keys.find((k) => k.id === old.id)?.expires_at).toBeNull();
  });

  /** `keys roll --grace 1h` on a terminal, answering its offer to save the new key in the profile. */
  async function rollAnswering(answer: "y" | "n") {
    const old = await newKey();
    const env = await profileWith(old.key);
    const terminal = onTerminal(["keys", "roll", "--grace", "1h"], env);
    await terminal.answer('Save the new key in profile "default"', answer);
    expect(await terminal.exited()).toBe(0);
    return { old, saved: savedKey(env), screen: terminal.screen() };
  }

  test.skipIf(!script)("on a terminal it offers to save the new key in the profile", async () => {
    const { old, saved, screen } = await rollAnswering("y");
    expect(saved).not.toBe(old.key);
    expect(screen).toContain(saved ?? "-");
  });

  test.skipIf(!script)("on a terminal, answering no keeps the old key in the profile", async () => {
    const { old, saved, screen } = await rollAnswering("n");
    expect(saved).toBe(old.key);
    expect(screen).toContain('Not saved: profile "default" keeps the old key');
  });
});

describe("keys restrict", () => {
  test("sets and lifts a key's allow-list; the key in use is not locked out by accident", async () => {
    const worker = await newKey();
    const manager = await newKey();
    const env = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: manager.key });
    const walled = await runJson<Schemas["ApiKey"]>(["keys", "restrict", worker.id, "--allow-ip", "10.0.0.0/8"], env);
    expect(walled.allowed_ips).toEqual(["10.0.0.0/8"]);
    const workerEnv = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: worker.key });
    const refused = await runCli(["wallet", "balance"], workerEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("IP_NOT_ALLOWED");
    expect((await runJson<Schemas["ApiKey"]>(["keys", "restrict", worker.id, "--any-ip"], env)).allowed_ips).toBeNull();
    expect((await runCli(["wallet", "balance"], workerEnv)).code).toBe(0);
    const self = await runCli(["keys", "restrict", manager.id, "--allow-ip", "10.0.0.0/8"], env);
    expect(self.code).toBe(1);
    expect(self.stderr).toContain("allow_lockout");
    expect((await runCli(["keys", "restrict", manager.id], env)).code).toBe(2);
  });
});
