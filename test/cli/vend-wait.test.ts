import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";
import { cliEnv, removeConfigDirs, runCli, startCli } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type Transaction = components["schemas"]["Transaction"];

// The sandbox keeps a number ending 4444 `pending` with no callback: every wait on it ends not final.
let server: TestServer;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  server = await startTestServer({}, { background: true });
  const account = await fundedAccount(server, 10_000_000, "vend-wait");
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

const airtime = (phone: string, ...more: string[]) => [
  "vend",
  "airtime",
  "--network",
  "mtn",
  "--phone",
  phone,
  "--amount",
  "100",
  "--yes",
  ...more,
];

describe("vend --wait", () => {
  test("ends not final: exit 0, the transaction on stdout as it stands, a hint on stderr on how to follow it", async () => {
    const result = await runCli(airtime("08031234444", "--wait", "1", "--json"), env);
    expect(result.code).toBe(0);
    const transaction = JSON.parse(result.stdout) as Transaction;
    expect(["queued", "pending"]).toContain(transaction.status);
    const ref = transaction.reference;
    expect(result.stderr).toContain(`${ref} is still ${transaction.status} after waiting 1s`);
    expect(result.stderr).toContain(`vendctl transactions watch ${ref}`);
    expect(result.stderr).toContain(`vendctl transactions get ${ref}`);
    expect(result.stderr).toContain("re-queried");
    // No spinner without a terminal: stderr holds the key and the hint only.
    expect(result.stderr).not.toContain("Waiting");
  });

  test("without --wait (or with --wait 0) a queued order is expected: no hint", async () => {
    for (const more of [[], ["--wait", "0"]]) {
      const result = await runCli(airtime("08031234444", ...more, "--json"), env);
      expect(result.code).toBe(0);
      expect(result.stderr).not.toContain("still");
    }
  });

  test("a final status within the wait is printed with no hint", async () => {
    const result = await runCli(airtime("08031234567", "--wait", "20", "--json"), env);
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as Transaction).status).toBe("successful");
    expect(result.stderr).not.toContain("still");
  });

  test.skipIf(!script)("on a terminal: a spinner on stderr with the status and the seconds waited, then the hint", async () => {
    const terminal = onTerminal(airtime("08031234444", "--wait", "3"), { ...env, TERM: "xterm", COLUMNS: "200" });
    await terminal.expectPrompt("Waiting for a final status: ");
    await terminal.expectPrompt("1s of 3s");
    await terminal.expectPrompt("Waiting for a final status: ");
    await terminal.expectPrompt("2s of 3s");
    expect(await terminal.proc.exited).toBe(0);
    expect(terminal.screen()).toMatch(/Waiting for a final status: (queued|pending), \ds of 3s/);
    expect(terminal.screen()).toMatch(/STATUS\s+(queued|pending)/);
    expect(terminal.screen()).toMatch(/txn_\w+ is still (queued|pending) after waiting 3s/);
  });
});

test("the server going away during the wait: the accepted transaction is still printed, with why the wait stopped", async () => {
  const own = await startTestServer();
  try {
    const account = await fundedAccount(own, 1_000_000, "wait-gone");
    const ownEnv = cliEnv({ VENDCTL_BASE_URL: own.url, VENDCTL_API_KEY: account.testKey });
    const vend = startCli(airtime("08031234444", "--wait", "30", "--json"), ownEnv);
    const client = own.client(account.testKey);
    const accepted = async () => (await client.get("/api/v1/transactions")).json.data.items.length > 0;
    await waitUntil(accepted, { what: "the vend accepted (a transaction)" });
    await own.close();
    expect((await vend.done).code).toBe(0);
    const output = vend.output();
    expect(output).toMatch(/Stopped waiting for txn_\w+: cannot reach/);
    expect(output).toMatch(/"status": "queued"/);
    expect(output).toMatch(/is still queued after waiting \d+s/);
    expect(output).not.toContain("after waiting 30s");
  } finally {
    await own.close().catch(() => {});
  }
});
