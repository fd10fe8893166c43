import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli } from "./cli.ts";

type Transaction = components["schemas"]["Transaction"];

// The sandbox fails a number ending 1111 at once (provider_refused); any other ending succeeds.
let server: TestServer;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
  const account = await fundedAccount(server, 10_000_000, "cli-failure-reason");
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

const airtime = (phone: string, ...more: string[]) =>
  runCli(["vend", "airtime", "--network", "mtn", "--phone", phone, "--amount", "100", "--yes", "--wait", "10", ...more], env);

describe("a failed vend's reason in vendctl", () => {
  test("vend --wait and transactions get show why it failed; list has a FAILURE column; a success shows none", async () => {
    const failed = await airtime("08031231111", "--table");
    expect(failed.code).toBe(0);
    expect(failed.stdout).toMatch(/STATUS\s+failed/);
    expect(failed.stdout).toMatch(
      /FAILED BECAUSE\s+The provider declined this order\. Nothing was charged\. \(provider_refused\)/,
    );

    const json = JSON.parse((await airtime("08031231111", "--json")).stdout) as Transaction;
    expect(json.metadata).toMatchObject({ failure_code: "provider_refused", failure_message: expect.any(String) });
    const got = await runCli(["transactions", "get", json.reference, "--table"], env);
    expect(got.stdout).toMatch(/FAILED BECAUSE\s+.+\(provider_refused\)/);

    const ok = JSON.parse((await airtime("08031230042", "--json")).stdout) as Transaction;
    expect(ok.status).toBe("successful");
    const shown = await runCli(["transactions", "get", ok.reference, "--table"], env);
    expect(shown.stdout).not.toContain("FAILED BECAUSE");

    const list = await runCli(["transactions", "list", "--table"], env);
    const [header = "", ...rows] = list.stdout.trimEnd().split("\n");
    expect(header).toContain("FAILURE");
    expect(rows.filter((row) => row.includes("provider_refused"))).toHaveLength(2);
    // The summary column does not repeat the failure keys.
    expect(list.stdout).not.toContain("failure_message=");
  });
});
