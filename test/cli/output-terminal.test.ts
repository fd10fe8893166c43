import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { insertTransactions } from "../helpers/seed.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

const esc = "\x1b[";
const total = 600;

let server: TestServer;
let env: Record<string, string | undefined>;
let dir = "";

beforeAll(async () => {
  server = await startTestServer();
  const account = await server.createAccount("output-terminal");
  await insertTransactions(server.database.handle.db, { accountId: account.id, mode: "test", count: total });
  dir = mkdtempSync(join(tmpdir(), "vendctl-pager-"));
  const { NO_COLOR: _, ...rest } = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
  env = { ...rest, TERM: "xterm", PAGER: "" };
});
afterAll(async () => {
  removeConfigDirs();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await server.close();
});

/** vendctl on a pseudo-terminal of `rows` lines, run to the end; the screen as written, colours included. */
async function runOnTerminal(args: string[], environment: Record<string, string | undefined>, rows = 50) {
  const terminal = onTerminal(args, environment, { rows, cols: 250 });
  const code = await terminal.exited();
  return { screen: terminal.rawScreen(), code };
}

/** A pager that notes it was run, then shows what it was given (or, with `quit`, reads a little and quits). */
function recordingPager(name: string, quit = false): { command: string; calls: () => number } {
  const marks = join(dir, `${name}.calls`);
  const path = join(dir, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\necho called >> '${marks}'\n${quit ? "head -c 100 >/dev/null" : "cat"}\n`);
  chmodSync(path, 0o755);
  const calls = () => (existsSync(marks) ? readFileSync(marks, "utf8").split("\n").length - 1 : 0);
  return { command: path, calls };
}

describe.skipIf(!script)("colour", () => {
  test("on a terminal: statuses in colour (successful green, failed red)", async () => {
    const { screen, code } = await runOnTerminal(["transactions", "list", "--limit", "40"], env);
    expect(code).toBe(0);
    expect(screen).toContain(`${esc}32msuccessful`);
    expect(screen).toContain(`${esc}31mfailed`);
  });

  test("none with NO_COLOR, with --no-color, or when piped", async () => {
    const noColor = await runOnTerminal(["transactions", "list", "--limit", "40"], { ...env, NO_COLOR: "1" });
    expect(noColor.screen).toContain("successful");
    expect(noColor.screen).not.toContain(esc);
    const flag = await runOnTerminal(["transactions", "list", "--limit", "40", "--no-color"], env);
    expect(flag.screen).toContain("successful");
    expect(flag.screen).not.toContain(esc);
    const piped = await runCli(["transactions", "list", "--limit", "40", "--table"], { ...env, NO_COLOR: undefined });
    expect(piped.stdout).toContain("successful");
    expect(piped.stdout).not.toContain(esc);
  });

  test("an error on a terminal has a red `error:` on stderr; plain with NO_COLOR", async () => {
    const coloured = await runOnTerminal(["transactions", "list", "--json", "nonsense"], env);
    expect(coloured.code).toBe(2);
    expect(coloured.screen).toContain(`${esc}31m${esc}1merror:`);
    const unknownFlag = await runOnTerminal(["transactions", "list", "--bogus"], env);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.screen).toContain(`${esc}31m${esc}1merror:`);
    const plain = await runOnTerminal(["transactions", "list", "--json", "nonsense"], { ...env, NO_COLOR: "1" });
    expect(plain.screen).toContain("error: unknown field nonsense");
    expect(plain.screen).not.toContain(esc);
  });
});

describe.skipIf(!script)("paging a table", () => {
  test("--all on a terminal: a page and row counter on stderr while the pages are read, then one aligned table", async () => {
    const { screen, code } = await runOnTerminal(["transactions", "list", "--all", "--limit", "100", "--no-pager"], env);
    expect(code).toBe(0);
    expect(screen).toContain("Fetching page 6 (500 rows so far)");
    expect(screen.match(/txn_/g)).toHaveLength(total);
  });
});

describe.skipIf(!script)("pager", () => {
  test("a table longer than the terminal goes through $PAGER, which shows all of it", async () => {
    const pager = recordingPager("long");
    const { screen, code } = await runOnTerminal(["transactions", "list", "--limit", "30"], { ...env, PAGER: pager.command }, 10);
    expect(code).toBe(0);
    expect(pager.calls()).toBe(1);
    expect(screen.match(/txn_/g)).toHaveLength(30);
  });

  test("not for a table that fits, not with --no-pager, not when stdout is piped", async () => {
    const pager = recordingPager("short");
    const withPager = { ...env, PAGER: pager.command };
    const fits = await runOnTerminal(["transactions", "list", "--limit", "5"], withPager, 40);
    expect(fits.screen.match(/txn_/g)).toHaveLength(5);
    const flag = await runOnTerminal(["transactions", "list", "--limit", "30", "--no-pager"], withPager, 10);
    expect(flag.screen.match(/txn_/g)).toHaveLength(30);
    const piped = await runCli(["transactions", "list", "--limit", "30", "--table"], withPager);
    expect(piped.stdout.match(/txn_/g)).toHaveLength(30);
    expect(pager.calls()).toBe(0);
  });

  test("a pager quit before the end (stdin closed) is not an error", async () => {
    const pager = recordingPager("quit", true);
    const { screen, code } = await runOnTerminal(["transactions", "list", "--all"], { ...env, PAGER: pager.command }, 10);
    expect(pager.calls()).toBe(1);
    expect(screen).not.toContain("EPIPE");
    expect(screen).not.toContain("error");
    expect(code).toBe(0);
  });
});
