import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { loadConfig } from "../../src/load-config.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { spawnProcess } from "../helpers/process.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { cliCommand, cliEnv, closedPort, removeConfigDirs, runCli, runJson } from "./cli.ts";

type Schemas = components["schemas"];
type Transaction = Schemas["Transaction"];

let server: TestServer;
let env: Record<string, string | undefined>;
let testKey: string;

beforeAll(async () => {
  // Processing and webhook delivery run in the server, as with `npm start`; the sandbox's own callbacks are
  // pushed far out so only `vendctl callbacks send` settles a 4444 transaction.
  const sandbox = { ...loadConfig({}).providers.sandbox, callbackDelayMs: 3_600_000, latencyMs: 0 };
  server = await startTestServer(fastProcessing({ providers: { sandbox } }), { background: true });
  const account = await fundedAccount(server, 10_000_000, "callbacks-webhooks");
  testKey = account.testKey;
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: testKey, VENDCTL_ADMIN_TOKEN: testAdminToken });
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

/** A 4444 vend, once the worker has sent it: the sandbox leaves it pending with no callback of its own. */
async function pendingVend(): Promise<Transaction> {
  const args = ["vend", "airtime", "--network", "mtn", "--phone", "08031234444", "--amount", "100", "--yes"];
  const vended = await runJson<Transaction>(args, env);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const now = (await server.client(testKey).get(`/api/v1/transactions/${vended.reference}`)).json.data as Transaction;
    if (now.status === "pending") return now;
    await Bun.sleep(25);
  }
  throw new Error(`${vended.reference} did not become pending`);
}

describe("webhooks add, list, remove; events", () => {
  test("add prints the signing secret once; list shows the endpoint; remove deletes it", async () => {
    const created = await runJson<Schemas["WebhookEndpointCreated"]>(
      ["webhooks", "add", `http://127.0.0.1:${closedPort()}/hooks`, "--description", "QA receiver"],
      env,
    );
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.description).toBe("QA receiver");
    const listed = await runJson<Schemas["WebhookEndpoint"][]>(["webhooks", "list"], env);
    expect(listed.map((e) => e.id)).toContain(created.id);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    expect(await runJson(["webhooks", "remove", created.id, "--yes"], env)).toEqual({ id: created.id, deleted: true });
    const after = await runJson<Schemas["WebhookEndpoint"][]>(["webhooks", "list"], env);
    expect(after.map((e) => e.id)).not.toContain(created.id);
  });
});

describe("a 4444 sandbox transaction and callbacks", () => {
  test("stays pending until `callbacks send` makes it final; the wallet follows; a contradiction is refused", async () => {
    const before = await runJson<Schemas["Wallet"]>(["wallet", "balance"], env);
    const vended = await pendingVend();
    const held = await runJson<Schemas["Wallet"]>(["wallet", "balance"], env);
    expect(held.held_kobo).toBe(before.held_kobo + vended.price_kobo);
    const applied = await runJson<Transaction>(
      ["callbacks", "send", vended.reference, "--status", "successful", "--provider-reference", "SBX-QA-1"],
      env,
    );
    expect(applied).toMatchObject({ reference: vended.reference, status: "successful" });
    expect(await runJson<Transaction>(["transactions", "get", vended.reference], env)).toMatchObject({ status: "successful" });
    const after = await runJson<Schemas["Wallet"]>(["wallet", "balance"], env);
    expect(after.balance_kobo).toBe(before.balance_kobo - vended.price_kobo);
    expect(after.held_kobo).toBe(before.held_kobo);
    const conflict = await runCli(["callbacks", "send", vended.reference, "--status", "failed"], env);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toStartWith("CALLBACK_CONFLICT: ");
  });

  test("a wrong secret is refused by the service (401)", async () => {
    const vended = await pendingVend();
    const forged = await runCli(
      ["callbacks", "send", vended.reference, "--status", "successful", "--sandbox-secret", "guess"],
      env,
    );
    expect(forged.code).toBe(1);
    expect(forged.stderr).toStartWith("UNAUTHENTICATED: ");
  });

  test("callbacks list shows stored callbacks by reference; replay runs one again through the same path", async () => {
    const vended = await pendingVend();
    await runJson(["callbacks", "send", vended.reference, "--status", "failed"], env);
    const stored = await runJson<Schemas["StoredCallback"][]>(["callbacks", "list", "--reference", vended.reference], env);
    expect(stored).toHaveLength(1);
    const original = stored[0];
    if (!original) throw new Error("no stored callback");
    expect(original).toMatchObject({ reference: vended.reference, signature_valid: true, http_status: 200 });
    const replayed = await runJson<Schemas["StoredCallback"]>(["callbacks", "replay", original.id], env);
    expect(replayed.replay_of).toBe(original.id);
    expect((await runJson<Transaction>(["transactions", "get", vended.reference], env)).status).toBe("failed");
    const table = await runCli(["callbacks", "list", "--reference", vended.reference, "--table"], env);
    expect(table.stdout.trimEnd().split("\n")).toHaveLength(3);
  });

  test("webhooks listen receives the real event with a valid signature; events list and resend", async () => {
    const port = closedPort();
    const endpoint = await runJson<Schemas["WebhookEndpointCreated"]>(["webhooks", "add", `http://127.0.0.1:${port}/`], env);
    const listener = spawnProcess(
      cliCommand(["webhooks", "listen", "--port", String(port), "--secret", endpoint.secret, "--table"]),
      env,
    );
    try {
      await listener.waitFor(/Listening on/);
      const vended = await pendingVend();
      await runJson(["callbacks", "send", vended.reference, "--status", "successful"], env);
      const delivered = new RegExp(`(\\S+) {2}transaction\\.successful {2}${vended.reference} {2}successful {2}signature valid`);
      const [, webhookId] = await listener.waitFor(delivered, 30_000);
      const events = await runJson<Schemas["Event"][]>(["events", "list", "--type", "transaction.successful", "--all"], env);
      const event = events.find((e) => "reference" in e.data && e.data.reference === vended.reference);
      if (!event) throw new Error("no event for the transaction");
      expect(webhookId).toBe(event.id);
      expect((await runJson<Schemas["Event"]>(["events", "resend", event.id], env)).id).toBe(event.id);
      await listener.waitFor(new RegExp(`${event.id} .*signature valid[\\s\\S]*${event.id} .*signature valid`), 30_000);
    } finally {
      await listener.stop();
      await runCli(["webhooks", "remove", endpoint.id, "--yes"], env);
    }
  }, 60_000);
});
