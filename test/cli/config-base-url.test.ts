import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, cliServer, freshConfigDir, runCli } from "./cli.ts";

const cli = cliServer();

const key = `rg_test_${"x".repeat(40)}`;

describe("a base URL that is not an http(s) URL is a usage error, whatever its source", () => {
  test("VENDCTL_BASE_URL without a scheme: exit 2, what is wrong and the fix", async () => {
    const result = await runCli(["wallet", "balance"], cliEnv({ VENDCTL_BASE_URL: "127.0.0.1:8080", VENDCTL_API_KEY: key }));
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: base URL "127.0.0.1:8080" (from VENDCTL_BASE_URL) is not an http:// or https:// URL; try http://127.0.0.1:8080\n',
    );
    expect(result.stdout).toBe("");
  });

  test.each([
    [["--base-url", "localhost:8080"], "(from --base-url) is not an http:// or https:// URL; try http://localhost:8080"],
    [["--base-url", "ftp://example.com"], '"ftp://example.com" (from --base-url) is not an http:// or https:// URL'],
    [["--base-url", "http://user:secret@example.com"], "must not contain a user name or password"],
    [["--base-url", "https://example.com/?x=1"], "must not have a query"],
    [["--base-url", "https://exa mple.com"], "is not an http:// or https:// URL"],
    [["--base-url", ""], "is empty"],
  ])("%p", async (args, message) => {
    const result = await runCli(["wallet", "balance", ...args], cliEnv({ VENDCTL_API_KEY: key }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  test("the password in a refused URL is not echoed", async () => {
    const result = await runCli(
      ["wallet", "balance", "--base-url", "http://user:hunter2@example.com"],
      cliEnv({ VENDCTL_API_KEY: key }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain("hunter2");
  });

  test("from a profile: names the profile and the file", async () => {
    const dir = freshConfigDir();
    writeFileSync(join(dir, "config.json"), JSON.stringify({ profiles: { qa: { baseUrl: "vend.example.com", apiKey: key } } }));
    const result = await runCli(["wallet", "balance", "--profile", "qa"], cliEnv({ VENDCTL_CONFIG_DIR: dir }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`(from profile "qa" in ${join(dir, "config.json")})`);
    expect(result.stderr).toContain("try http://vend.example.com");
  });

  test("a trailing slash is fine", async () => {
    const result = await runCli(
      ["wallet", "balance", "--json"],
      cliEnv({ VENDCTL_BASE_URL: `${cli.server.url}/`, VENDCTL_API_KEY: key }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toStartWith("UNAUTHENTICATED: ");
  });

  test("vendctl login refuses it before asking the server, and writes nothing", async () => {
    const env = cliEnv();
    const result = await runCli(["login", "--base-url", "127.0.0.1:8080", "--api-key", key], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('base URL "127.0.0.1:8080" (from --base-url) is not an http:// or https:// URL');
    expect(existsSync(join(env.VENDCTL_CONFIG_DIR ?? "", "config.json"))).toBe(false);
  });
});
