import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAdminToken } from "../helpers/server.ts";
import { cliCommand, cliEnv, cliServer, closedPort, freshConfigDir, runCli, runJson } from "./cli.ts";

const cli = cliServer({ account: { name: "profiles", kobo: 10_000 } });
const testKey = () => cli.account.testKey;

type Env = Record<string, string | undefined>;

function withProfiles(profiles: Record<string, Record<string, string>>, extra: Env = {}): Env {
  const dir = freshConfigDir();
  writeFileSync(join(dir, "config.json"), JSON.stringify({ profiles }));
  return cliEnv({ VENDCTL_CONFIG_DIR: dir, ...extra });
}

const savedFile = (env: Env) => JSON.parse(readFileSync(join(env.VENDCTL_CONFIG_DIR ?? "", "config.json"), "utf8"));

describe("--profile names a profile that does not exist: exit 2, naming those that do", () => {
  test("some profiles exist", async () => {
    const env = withProfiles({ default: { baseUrl: cli.server.url }, qa: { baseUrl: cli.server.url } });
    const result = await runCli(["wallet", "balance", "--profile", "nope"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no profile "nope"');
    expect(result.stderr).toContain("profiles: default, qa");
  });

  test("none exist: says so and how to create one", async () => {
    const result = await runCli(["auth", "status"], cliEnv({ VENDCTL_PROFILE: "nope" }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no profile "nope": no profiles are saved');
    expect(result.stderr).toContain("vendctl login --profile nope");
  });
});

describe("vendctl config list|get|set|unset", () => {
  test("set writes the active profile (creating it), get reads it back, list masks the secrets", async () => {
    const env = cliEnv();
    expect((await runCli(["config", "set", "base_url", `${cli.server.url}/`], env)).code).toBe(0);
    const viaStdin = await runCli(["config", "set", "api_key", "-"], env, `${testKey()}\n`);
    expect(viaStdin.code).toBe(0);
    expect(viaStdin.stderr).toContain('Saved api_key in profile "default"');
    expect((await runCli(["config", "set", "base_url", cli.server.url, "--profile", "qa"], env)).code).toBe(0);
    expect(savedFile(env)).toEqual({
      profiles: { default: { baseUrl: cli.server.url, apiKey: testKey() }, qa: { baseUrl: cli.server.url } },
    });

    const got = await runCli(["config", "get", "api_key"], env);
    expect(got).toEqual({ code: 0, stdout: `${testKey()}\n`, stderr: "" });
    expect((await runCli(["config", "get", "base_url", "--profile", "qa"], env)).stdout).toBe(`${cli.server.url}\n`);
    const unset = await runCli(["config", "get", "admin_token"], env);
    expect(unset).toMatchObject({ code: 0, stdout: "" });
    expect(unset.stderr).toContain('admin_token is not set in profile "default"');

    const listed = await runJson<{ profile: string; active: boolean; api_key: string | null }[]>(["config", "list"], {
      ...env,
      VENDCTL_PROFILE: "qa",
    });
    expect(listed).toEqual([
      expect.objectContaining({ profile: "default", active: false, api_key: `${testKey().slice(0, 12)}…[redacted]` }),
      expect.objectContaining({ profile: "qa", active: true, api_key: null }),
    ]);
    const table = await runCli(["config", "list", "--table"], env);
    expect(table.stdout).toMatch(/^\* +default +http/m);
    expect(table.stdout).not.toContain(testKey());

    expect(await runJson(["wallet", "balance"], env)).toMatchObject({ balance_kobo: 10_000 });
    expect((await runCli(["config", "unset", "api_key"], env)).code).toBe(0);
    expect(savedFile(env).profiles.default).toEqual({ baseUrl: cli.server.url });
  });

  test.each([
    [
      ["config", "set", "base_url", "127.0.0.1:8080"],
      'base URL "127.0.0.1:8080" (from the command line) is not an http:// or https:// URL',
    ],
    [["config", "set", "api_key", "sk_123"], "api_key must start with rg_test_ or rg_live_"],
    [["config", "set", "region", "x"], "invalid"],
    [["config", "get", "password"], "invalid"],
    [["config", "set", "base_url", "http://a.example", "--profile", "bad name"], 'profile name "bad name"'],
  ])("%p is a usage error and nothing is written", async (args, message) => {
    const env = cliEnv();
    const result = await runCli(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(() => savedFile(env)).toThrow();
  });
});

describe("vendctl auth status", () => {
  test("a working key and token: where each value came from, the key's mode, the token's operator and role", async () => {
    const env = withProfiles(
      { default: { baseUrl: cli.server.url, apiKey: testKey() } },
      { VENDCTL_ADMIN_TOKEN: testAdminToken },
    );
    const status = await runJson<Record<string, unknown>>(["auth", "status"], env);
    expect(status).toEqual({
      profile: "default",
      config_file: join(env.VENDCTL_CONFIG_DIR ?? "", "config.json"),
      base_url: cli.server.url,
      base_url_source: `profile "default" in ${join(env.VENDCTL_CONFIG_DIR ?? "", "config.json")}`,
      api_key: {
        value: `${testKey().slice(0, 12)}…[redacted]`,
        source: status.base_url_source,
        valid: true,
        error: null,
        mode: "test",
        account_id: cli.account.id,
        key_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        expires_at: null,
        allowed_ips: null,
        rate_limit: null,
      },
      admin_token: {
        value: "[redacted]",
        source: "VENDCTL_ADMIN_TOKEN",
        valid: true,
        error: null,
        operator: "ADMIN_TOKEN",
        role: "admin",
      },
    });
    const table = await runCli(["auth", "status", "--table"], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      new RegExp(
        `^API key +rg_test_\\w{4}…\\[redacted\\] from profile "default" .*: valid, test mode, account ${cli.account.id}$`,
        "m",
      ),
    );
    expect(table.stdout).toMatch(/^Admin token +\[redacted\] from VENDCTL_ADMIN_TOKEN: operator ADMIN_TOKEN, role admin$/m);
    expect(table.stdout + table.stderr).not.toContain(testKey());
  });

  test("a refused key: says so, exit 1", async () => {
    const env = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: `rg_test_${"x".repeat(40)}` });
    const result = await runCli(["auth", "status", "--json"], env);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).api_key).toMatchObject({
      valid: false,
      mode: null,
      error: expect.stringMatching(/^UNAUTHENTICATED: /),
    });
    expect(result.stderr).toContain("UNAUTHENTICATED: the API refused the API key");
  });

  test("an unreachable server: exit 3; nothing configured: exit 2", async () => {
    const env = cliEnv({ VENDCTL_BASE_URL: `http://127.0.0.1:${closedPort()}`, VENDCTL_API_KEY: testKey() });
    const unreachable = await runCli(["auth", "status"], env);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toContain("cannot reach");
    const none = await runCli(["auth", "status"], cliEnv({ VENDCTL_BASE_URL: cli.server.url }));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("not logged in");
  });
});

describe("vendctl logout", () => {
  test("removes the active profile's credentials and keeps its base URL; --all every profile's", async () => {
    const env = withProfiles({
      default: { baseUrl: cli.server.url, apiKey: testKey(), adminToken: testAdminToken },
      qa: { apiKey: testKey() },
      bare: { baseUrl: cli.server.url },
    });
    const result = await runCli(["logout"], { ...env, VENDCTL_ADMIN_TOKEN: "still-here" });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Removed the saved credentials of profile "default"');
    expect(result.stderr).toContain("VENDCTL_ADMIN_TOKEN still set");
    expect(savedFile(env).profiles.default).toEqual({ baseUrl: cli.server.url });
    const after = await runCli(["wallet", "balance"], env);
    expect(after.code).toBe(2);
    expect(after.stderr).toContain("no API key");
    expect((await runCli(["logout", "--all"], env)).code).toBe(0);
    expect(savedFile(env)).toEqual({ profiles: { default: { baseUrl: cli.server.url }, bare: { baseUrl: cli.server.url } } });
    const again = await runCli(["logout"], env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("nothing to remove");
  });
});

describe("the configuration file is replaced atomically", () => {
  test("private file and directory, no temporary file left, content whole", async () => {
    const env = cliEnv();
    const dir = env.VENDCTL_CONFIG_DIR ?? "";
    await runCli(["config", "set", "base_url", cli.server.url], env);
    await runCli(["config", "set", "api_key", testKey(), "--profile", "other"], env);
    expect(readdirSync(dir)).toEqual(["config.json"]);
    expect(statSync(join(dir, "config.json")).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(savedFile(env)).toEqual({ profiles: { default: { baseUrl: cli.server.url }, other: { apiKey: testKey() } } });
  });

  test("a reader never sees a partly written file while vendctl rewrites it", async () => {
    const profiles = Object.fromEntries(
      Array.from({ length: 2000 }, (_, i) => [`p${i}`, { baseUrl: `https://host-${i}.example.com`, apiKey: testKey() }]),
    );
    const env = withProfiles(profiles);
    const path = join(env.VENDCTL_CONFIG_DIR ?? "", "config.json");
    const writes = 8;
    const writer = Bun.spawn(
      [
        "bash",
        "-c",
        `for i in $(seq ${writes}); do "$@" config set base_url "https://w$i.example.com" || exit 1; done`,
        "-",
        ...cliCommand([]),
      ],
      { env: env as Record<string, string>, stdout: "ignore", stderr: "ignore" },
    );
    let reads = 0;
    let partial = 0;
    while (writer.exitCode === null) {
      for (let i = 0; i < 100; i++) {
        try {
          JSON.parse(readFileSync(path, "utf8"));
        } catch {
          partial += 1;
        }
        reads += 1;
      }
      await Bun.sleep(0);
    }
    expect(await writer.exited).toBe(0);
    expect(reads).toBeGreaterThan(writes);
    expect(partial).toBe(0);
    expect(savedFile(env).profiles.default).toEqual({ baseUrl: `https://w${writes}.example.com` });
    expect(readdirSync(env.VENDCTL_CONFIG_DIR ?? "")).toEqual(["config.json"]);
  });
});
