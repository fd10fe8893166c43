// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CliResult, cliEnv, cliServer, closedPort, runCli, runCommand } from "./cli.ts";

const cli = cliServer({ account: { name: "errors and hints", kobo: 100_000 } });
const env = () => cli.apiEnv();
const scratch = mkdtempSync(join(tmpdir(), "vendctl-errors-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vendctl auth alone checks the credentials", () => {
  test("`auth` runs the check of `auth status`: same answer, exit 0", async () => {
    const alone = await runCli(["auth", "--json"], env());
    const status = await runCli(["auth", "status", "--json"], env());
    expect(alone.code).toBe(0);
    expect(status.code).toBe(0);
    const checked = JSON.parse(alone.stdout);
    expect(checked).toMatchObject({ base_url: cli.server.url, api_key: { valid: true, mode: "test" } });
    // Only the rate-limit budget may differ between two checks.
    const withoutBudget = (text: string) => ({ ...JSON.parse(text), api_key: { ...JSON.parse(text).api_key, rate_limit: null } });
    expect(withoutBudget(alone.stdout)).toEqual(withoutBudget(status.stdout));
  });

  test("`auth` without credentials is the same usage error as `auth status`; `auth --help` still lists status", async () => {
    const bare = cliEnv({ VENDCTL_BASE_URL: cli.server.url });
    const alone = await runCli(["auth"], bare);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("not logged in");
    expect(alone.stderr).not.toContain("Usage:");
    const help = await runCli(["auth", "--help"], env());
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/\n {2}status\b/);
  });
});

/** A bin folder holding only `node`, and a copy of the launcher with no Bun anywhere near it. */
function launcherWithoutBun(): { launcher: string; path: string } {
  const node = Bun.which("node") ?? "node";
  const bin = join(scratch, "bin");
  const app = join(scratch, "app", "cli");
  mkdirSync(bin, { recursive: true });
  mkdirSync(app, { recursive: true });
  symlinkSync(node, join(bin, "node"));
  writeFileSync(join(scratch, "app", "package.json"), JSON.stringify({ name: "vendctl-copy", type: "module" }));
  copyFileSync(join(import.meta.dir, "../../cli/vendctl.js"), join(app, "vendctl.js"));
  return { launcher: join(app, "vendctl.js"), path: bin };
}

describe("every error vendctl prints itself starts with lowercase `error:`, as commander's own do", () => {
  const own: [string, () => Promise<CliResult>][] = [
    ["commander: unknown option", () => runCli(["wallet", "balance", "--bogus"], env())],
    ["a missing flag without a terminal", () => runCli(["vend", "airtime", "--network", "mtn"], env())],
    ["no credentials", () => runCli(["wallet", "balance"], cliEnv({ VENDCTL_BASE_URL: cli.server.url }))],
    ["a bad --jq", () => runCli(["--jq", "bad(", "wallet", "balance"], env())],
    ["an unreachable server", () => runCli(["wallet", "balance", "--base-url", `http://127.0.0.1:${closedPort()}`], env())],
  ];
  const startsWithError = (result: CliResult) => {
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/^error: \S/);
    expect(result.stderr).not.toMatch(/\bError:/);
    expect(result.stdout).not.toMatch(/\berror:/i);
  };

  test.each(own)("%s", async (_, run) => startsWithError(await run()));

  test.skipIf(!Bun.which("node"))("the launcher run by Node with no Bun to start", async () => {
    const { launcher, path } = launcherWithoutBun();
    const result = await runCommand([join(path, "node"), launcher, "--version"], cliEnv({ PATH: path }));
    startsWithError(result);
    expect(result.stderr).toContain("cannot start Bun");
  });

  test("an API error is the API's code and message, with no `Error:` either", async () => {
    const result = await runCli(["transactions", "get", "txn_000000000000000000000000"], env());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^NOT_FOUND: /);
    expect(result.stderr).not.toMatch(/\bError:/i);
  });
});

describe("a server that cannot be reached: one line saying where, why and what to do, exit 3", () => {
  test("connection refused: start one, or point vendctl elsewhere", async () => {
    const url = `http://127.0.0.1:${closedPort()}`;
    const result = await runCli(["wallet", "balance"], { ...env(), VENDCTL_BASE_URL: url });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `error: cannot reach the vend server at ${url} (connection refused): start one with \`npm start\` (or \`vend\`), or set --base-url / VENDCTL_BASE_URL\n`,
    );
    expect(result.stdout).toBe("");
  });

  test("a host name that does not resolve: check it", async () => {
    const url = "http://vend-server.invalid:8080";
    const result = await runCli(["wallet", "balance", "--base-url", url], env());
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `error: cannot reach the vend server at ${url} (host not found): check the host name, or set --base-url / VENDCTL_BASE_URL\n`,
    );
  });

  test("the same for commands that check credentials or use the admin token", async () => {
    const url = `http://127.0.0.1:${closedPort()}`;
    for (const args of [["auth"], ["accounts", "list", "--admin-token", "t"]]) {
      const result = await runCli(args, { ...env(), VENDCTL_BASE_URL: url });
      expect(result.code, args.join(" ")).toBe(3);
      expect(result.stderr, args.join(" ")).toStartWith(`error: cannot reach the vend server at ${url} (connection refused): `);
      expect(result.stderr.trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
    }
  });
});
