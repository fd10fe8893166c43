import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { spawnProcess } from "../helpers/process.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliCommand, cliEnv, removeConfigDirs, runCli } from "./cli.ts";

type Schemas = components["schemas"];
type Transaction = Schemas["Transaction"];

let server: TestServer;
let testKey: string;
let liveKey: string;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  // Processing runs in the server, as with `npm start`: callbacks after 150 ms, the first re-query after 0.2 s.
  server = await startTestServer(fastProcessing(), { background: true });
  const account = await fundedAccount(server, 10_000_000, "trigger");
  testKey = account.testKey;
  liveKey = account.liveKey;
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: testKey });
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

async function eventTypesOf(reference: string): Promise<string[]> {
  const events: Schemas["Event"][] = (await server.client(testKey).get("/api/v1/events", { query: { limit: 100 } })).json.data
    .items;
  return events.filter((e) => "reference" in e.data && e.data.reference === reference).map((e) => e.type);
}

async function trigger(args: string[]): Promise<{ transaction: Transaction; stderr: string }> {
  const result = await runCli(["trigger", ...args, "--json"], env);
  if (result.code !== 0) throw new Error(`vendctl trigger ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return { transaction: JSON.parse(result.stdout) as Transaction, stderr: result.stderr };
}

describe("vendctl trigger", () => {
  const finalOutcomes: [string, "successful" | "failed", string][] = [
    ["successful", "successful", "transaction.successful"],
    ["failed", "failed", "transaction.failed"],
    ["pending-then-successful", "successful", "transaction.successful"],
    ["pending-then-failed", "failed", "transaction.failed"],
    ["timeout-then-successful", "successful", "transaction.successful"],
  ];

  for (const [outcome, status, event] of finalOutcomes) {
    test(`${outcome}: a sandbox airtime vend that ends ${status} with one ${event} event`, async () => {
      const { transaction, stderr } = await trigger([outcome, "--wait", "10"]);
      expect(transaction).toMatchObject({ mode: "test", service: "airtime", status });
      expect(transaction.metadata.vendctl_trigger).toBe(outcome);
      expect(stderr).toContain(`Triggered ${outcome}: ${transaction.reference}`);
      expect(stderr).toContain(`Expect: ${event}`);
      expect(await eventTypesOf(transaction.reference)).toEqual([event]);
    }, 30_000);
  }

  test("pending: the vend stays pending and no event is sent", async () => {
    const { transaction, stderr } = await trigger(["pending", "--wait", "2"]);
    expect(transaction.status).toBe("pending");
    expect(stderr).toContain("Expect: no event");
    const now: Transaction = (await server.client(testKey).get(`/api/v1/transactions/${transaction.reference}`)).json.data;
    expect(now.status).toBe("pending");
    expect(await eventTypesOf(transaction.reference)).toEqual([]);
  });

  test("without --wait it prints the accepted transaction at once", async () => {
    const { transaction } = await trigger(["pending-then-failed"]);
    expect(["queued", "pending"]).toContain(transaction.status);
  });

  test("with webhooks listen running, the triggered event arrives signed for its temporary endpoint", async () => {
    const listener = spawnProcess(cliCommand(["webhooks", "listen", "--port", "0", "--table"]), env);
    try {
      await listener.waitFor(/Listening on/);
      const { transaction } = await trigger(["pending-then-failed"]);
      await listener.waitFor(new RegExp(`transaction\\.failed {2}${transaction.reference} {2}failed {2}signature valid`), 30_000);
    } finally {
      expect(await listener.stop("SIGINT")).toBe(0);
    }
  }, 60_000);

  test("a live key is a usage error and nothing is vended", async () => {
    const result = await runCli(["trigger", "successful"], { ...env, VENDCTL_API_KEY: liveKey });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("test key");
    const live: Transaction[] = (await server.client(liveKey).get("/api/v1/transactions")).json.data.items;
    expect(live).toEqual([]);
  });

  test("an unknown outcome is a usage error; --help lists the outcomes", async () => {
    const unknown = await runCli(["trigger", "refunded"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("pending-then-successful");
    const help = await runCli(["trigger", "--help"], env);
    expect(help.code).toBe(0);
    for (const outcome of ["successful", "failed", "pending-then-successful", "pending-then-failed", "pending"]) {
      expect(help.stdout).toContain(`  ${outcome} `);
    }
  });
});
