// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { describe, expect, test } from "bun:test";
import type { Command } from "commander";
import { buildProgram } from "../../cli/index.ts";
import { cliServer, closedPort, runCli } from "./cli.ts";

const cli = cliServer({ account: { name: "exit-codes", kobo: 100_000 } });
const env = () => cli.apiEnv();
const liveKey = () => cli.account.liveKey;

/** Every command path below the program: groups and leaves. */
function commandPaths(command: Command, path: string[] = []): string[][] {
  return command.commands.flatMap((c) => [[...path, c.name()], ...commandPaths(c, [...path, c.name()])]);
}

describe("exit codes", () => {
  test("0: success", async () => {
    const result = await runCli(["wallet", "balance", "--json"], env());
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ mode: "test", balance_kobo: 100_000 });
  });

  test("1: a live key refused by `wallet fund`, with the API's code and message", async () => {
    const result = await runCli(["wallet", "fund", "5000", "--api-key", liveKey()], env());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "TEST_MODE_ONLY: Only test wallets can be funded through the API; live wallets are credited by operators",
    );
    expect(result.stdout).toBe("");
  });

  test("1: other API errors print code, message and each field problem", async () => {
    const missing = await runCli(["transactions", "get", "txn_000000000000000000000000"], env());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^NOT_FOUND: /);
    const invalid = await runCli(["vend", "airtime", "--network", "mtn", "--phone", "0803", "--amount", "100"], env());
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("VALIDATION_FAILED: ");
    expect(invalid.stderr).toMatch(/\n {2}phone_number: /);
  });

  test.each([
    [["wallet", "balance", "--bogus"], "unknown option"],
    [["walet", "balance"], "unknown command"],
    [["vend", "airtime", "--network", "mtn", "--phone", "08031234567", "--amount", "1.234"], "--amount must be an amount in NGN"],
    [["vend", "airtime", "--network", "mtn"], "missing --phone, --amount"],
    [["vend", "cable", "--yes"], "missing --biller, --smartcard, --product"],
    [["transactions", "list", "--limit", "0"], "expected a whole number"],
    [["transactions", "list", "--status", "done"], "Allowed choices"],
    [["wallet", "balance", "--json", "--csv"], "choose one output format"],
    [["accounts", "create"], "required option '--name <name>'"],
    [["wallet"], "Usage: vendctl wallet"],
  ])("2: usage error for %j", async (args, message) => {
    const result = await runCli(args, env());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  test("3: the server cannot be reached", async () => {
    const result = await runCli(["wallet", "balance", "--base-url", `http://127.0.0.1:${closedPort()}`], env());
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("cannot reach");
  });
});

describe("help", () => {
  test("--help exits 0 and documents the exit codes", async () => {
    const result = await runCli(["--help"], env());
    expect(result.code).toBe(0);
    for (const line of ["0    ok", "1    API error", "2    usage", "3    the server cannot be reached"]) {
      expect(result.stdout).toContain(line);
    }
  });

  test("every command and group has --help with an example, and --json among its options", async () => {
    const paths = commandPaths(buildProgram());
    expect(paths.length).toBeGreaterThanOrEqual(38);
    const spawned = await Promise.all(paths.map((path) => runCli([...path, "--help"], env())));
    spawned.forEach((result, i) => {
      const name = (paths[i] ?? []).join(" ");
      expect(result.code, name).toBe(0);
      expect(result.stdout, name).toContain("Example");
      expect(result.stdout, name).toContain("$ vendctl");
      expect(result.stdout, name).toContain("--json");
    });
  });

  test("completion scripts for bash and zsh name the commands", async () => {
    for (const shell of ["bash", "zsh"]) {
      const result = await runCli(["completion", shell], env());
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("_vendctl");
      expect(result.stdout).toContain('"vend") echo "airtime data electricity cable bulk"');
    }
    const syntax = Bun.spawnSync(["bash", "-n"], {
      stdin: new TextEncoder().encode((await runCli(["completion", "bash"], env())).stdout),
    });
    expect(syntax.exitCode).toBe(0);
  });
});
