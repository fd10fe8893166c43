import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { processingRunner } from "../../src/background.ts";
import { apiKeys, ledgerEntries, products, webhookEndpoints } from "../../src/db/schema/index.ts";
import { expectRecordedByAnswer } from "../helpers/accounts.ts";
import { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { type RecordingProxy, startRecordingProxy } from "../helpers/recording-proxy.ts";
import { testAdminToken } from "../helpers/server.ts";
import { type CliResult, cliEnv, cliServer, closedPort, runCli } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type Schemas = components["schemas"];
type Env = Record<string, string | undefined>;

// The shortest propagation bound allowed: a revocation's answer waits at most that for the processes to refuse it.
const cli = cliServer({
  config: fastProcessing({ keyPropagationMs: 200 }),
  account: { name: "confirmations", kobo: 1_000_000 },
});
const server = () => cli.server;
const db = () => server().database.handle.db;

/**
 * Every request vendctl makes goes through this proxy to the test server, so a test can say what was sent:
 * "nothing" is an empty list, not a state that happens to look unchanged.
 */
let sent: string[] = [];
let proxy: RecordingProxy | undefined;
beforeAll(() => {
  proxy = startRecordingProxy(() => server().url);
  sent = proxy.sent;
});
afterAll(() => proxy?.stop());

const proxied = (credentials: Env): Env =>
  cliEnv({ VENDCTL_BASE_URL: proxy?.url, TERM: "xterm", COLUMNS: "200", ...credentials });
const asAdmin = () => proxied({ VENDCTL_ADMIN_TOKEN: testAdminToken });
const asKey = (key = cli.account.testKey) => proxied({ VENDCTL_API_KEY: key });

/** What `args` sent while it ran. */
async function sentBy(run: () => Promise<CliResult | number>): Promise<{ result: CliResult | number; requests: string[] }> {
  sent.length = 0;
  const result = await run();
  return { result, requests: [...sent] };
}

async function newTestKey(): Promise<Schemas["ApiKeyCreated"]> {
  const created = await server().admin.post(`/admin/v1/accounts/${cli.account.id}/keys`, { mode: "test" });
  expect(created.status).toBe(201);
  return created.json.data;
}

const keyWorks = async (key: string) => (await server().client(key).get("/api/v1/wallet")).status === 200;

/** The key's recorded end (`expires_at` for a roll, `revoked_at` for a revocation) has passed by the answer, and the key is refused. */
async function stopsAtRecordedEnd(id: string, key: string, end: "expiresAt" | "revokedAt"): Promise<void> {
  const [row] = await db().select().from(apiKeys).where(eq(apiKeys.id, id));
  const recorded = row?.[end];
  expect(recorded).toBeInstanceOf(Date);
  expectRecordedByAnswer(recorded?.toISOString());
  expect(await keyWorks(key)).toBe(false);
}

async function newEndpoint(): Promise<Schemas["WebhookEndpointCreated"]> {
  const created = await cli.account.client.post("/api/v1/webhook-endpoints", { url: `http://127.0.0.1:${closedPort()}/hooks` });
  expect(created.status).toBe(201);
  return created.json.data;
}

const endpointRow = async (id: string) => (await db().select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)))[0];
const ledgerCount = async () => (await db().select({ n: count() }).from(ledgerEntries))[0]?.n;

/** One command under test: how to run it, what it asks on a terminal, and its effect before and after. */
interface Prepared {
  args: string[];
  env: Env;
  question: string;
  /** The request that does it, `METHOD /path`. */
  operation: string;
  untouched(): Promise<void>;
  done(): Promise<void>;
}

interface Case {
  name: string;
  prepare(): Promise<Prepared>;
}

const cases: Case[] = [
  {
    name: "transactions resolve (moves money)",
    async prepare() {
      const reference = await vendAirtime(cli.account.client, "08031234444");
      await processingRunner({ ...server().deps, apiBaseUrl: server().url }, "confirm-worker").tick();
      const { priceKobo } = await transactionRow(db(), reference);
      const entries = await ledgerCount();
      return {
        args: ["transactions", "resolve", reference, "--status", "failed", "--note", "drill"],
        env: asAdmin(),
        question: `Resolve ${reference} as failed and release NGN ${(Number(priceKobo) / 100).toFixed(2)} to the wallet?`,
        operation: `POST /admin/v1/transactions/${reference}/resolve`,
        async untouched() {
          expect((await transactionRow(db(), reference)).status).toBe("pending");
          expect(await ledgerCount()).toBe(entries);
        },
        async done() {
          expect((await transactionRow(db(), reference)).status).toBe("failed");
        },
      };
    },
  },
  {
    name: "products update (changes prices for every account)",
    async prepare() {
      const price = async () => (await db().select().from(products).where(eq(products.code, "glo-data-5gb-30d")))[0]?.priceKobo;
      const before = await price();
      const next = Number(before) + 100;
      return {
        args: ["products", "update", "glo-data-5gb-30d", "--price", String(next / 100)],
        env: asAdmin(),
        question: `Update glo-data-5gb-30d for every account: price = NGN ${(next / 100).toFixed(2)}?`,
        operation: "PATCH /admin/v1/products/glo-data-5gb-30d",
        untouched: async () => expect(await price()).toBe(before),
        done: async () => expect(Number(await price())).toBe(next),
      };
    },
  },
  {
    name: "providers disable (takes a provider away)",
    async prepare() {
      const enabled = async () => {
        const listed = await server().admin.get("/admin/v1/providers");
        return (listed.json.data as Schemas["ProviderOverview"]).providers.find((p) => p.name === "sandbox")?.enabled;
      };
      return {
        args: ["providers", "disable", "sandbox", "--reason", "drill"],
        env: asAdmin(),
        question: "Disable provider sandbox?",
        operation: "POST /admin/v1/providers/sandbox/disable",
        untouched: async () => expect(await enabled()).toBe(true),
        async done() {
          expect(await enabled()).toBe(false);
          expect((await server().admin.post("/admin/v1/providers/sandbox/enable")).status).toBe(200);
        },
      };
    },
  },
  {
    name: "operators revoke (takes a token away)",
    async prepare() {
      const created = await server().admin.post("/admin/v1/operators", { name: `op-${Date.now()}`, role: "viewer" });
      expect(created.status).toBe(201);
      const { operator, token } = created.json.data as Schemas["OperatorCreated"];
      const works = async () => (await new HttpClient(server().url, token).get("/admin/v1/operators/me")).status === 200;
      return {
        args: ["operators", "revoke", operator.id ?? ""],
        env: asAdmin(),
        question: `Revoke operator ${operator.id}?`,
        operation: `DELETE /admin/v1/operators/${operator.id}`,
        untouched: async () => expect(await works()).toBe(true),
        done: async () => expect(await works()).toBe(false),
      };
    },
  },
  {
    name: "wallet fund --account --mode live (moves money)",
    async prepare() {
      const entries = await ledgerCount();
      return {
        args: ["wallet", "fund", "2500", "--account", cli.account.id, "--mode", "live", "--note", "drill"],
        env: asAdmin(),
        question: `Credit NGN 2500.00 to the live wallet of account ${cli.account.id}?`,
        operation: `POST /admin/v1/accounts/${cli.account.id}/wallet/credit`,
        untouched: async () => expect(await ledgerCount()).toBe(entries),
        done: async () => expect(await ledgerCount()).toBe((entries ?? 0) + 1),
      };
    },
  },
  {
    name: "webhooks update --disable (takes deliveries away)",
    async prepare() {
      const endpoint = await newEndpoint();
      return {
        args: ["webhooks", "update", endpoint.id, "--disable"],
        env: asKey(),
        question: `Disable webhook endpoint ${endpoint.id}?`,
        operation: `PATCH /api/v1/webhook-endpoints/${endpoint.id}`,
        untouched: async () => expect((await endpointRow(endpoint.id))?.enabled).toBe(true),
        done: async () => expect((await endpointRow(endpoint.id))?.enabled).toBe(false),
      };
    },
  },
  {
    name: "webhooks rotate-secret --overlap 0 (takes the old secret away at once)",
    async prepare() {
      const endpoint = await newEndpoint();
      return {
        args: ["webhooks", "rotate-secret", endpoint.id, "--overlap", "0"],
        env: asKey(),
        question: `Rotate the signing secret of webhook endpoint ${endpoint.id} with no overlap?`,
        operation: `POST /api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`,
        untouched: async () => expect((await endpointRow(endpoint.id))?.secret).toBe(endpoint.secret),
        done: async () => expect((await endpointRow(endpoint.id))?.secret).not.toBe(endpoint.secret),
      };
    },
  },
  {
    name: "keys roll --grace 0 (takes the key in use away at once)",
    async prepare() {
      const { key, id } = await newTestKey();
      return {
        args: ["keys", "roll", "--grace", "0", "--no-save"],
        env: asKey(key),
        question: "Roll the API key in use with no grace?",
        operation: "POST /api/v1/keys/roll",
        untouched: async () => expect(await keyWorks(key)).toBe(true),
        done: () => stopsAtRecordedEnd(id, key, "expiresAt"),
      };
    },
  },
  {
    name: "keys revoke (takes a key away)",
    async prepare() {
      const { key, id } = await newTestKey();
      return {
        args: ["keys", "revoke", id],
        env: asAdmin(),
        question: `Revoke API key ${id}?`,
        operation: `DELETE /admin/v1/keys/${id}`,
        untouched: async () => expect(await keyWorks(key)).toBe(true),
        done: () => stopsAtRecordedEnd(id, key, "revokedAt"),
      };
    },
  },
  {
    name: "webhooks remove (takes an endpoint away)",
    async prepare() {
      const endpoint = await newEndpoint();
      return {
        args: ["webhooks", "remove", endpoint.id],
        env: asKey(),
        question: `Remove webhook endpoint ${endpoint.id} (${endpoint.url})?`,
        operation: `DELETE /api/v1/webhook-endpoints/${endpoint.id}`,
        untouched: async () => expect((await endpointRow(endpoint.id))?.deletedAt).toBeNull(),
        done: async () => expect((await endpointRow(endpoint.id))?.deletedAt).not.toBeNull(),
      };
    },
  },
];

describe.each(cases)("$name", ({ prepare }) => {
  test("without a terminal and without --yes: exit 2 naming --yes, and not one request sent", async () => {
    const command = await prepare();
    const { result, requests } = await sentBy(() => runCli(command.args, command.env));
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect((result as CliResult).stderr).toContain("confirm with --yes");
    expect((result as CliResult).stderr).toContain("nothing was sent");
    expect(requests).toEqual([]);
    await command.untouched();
  });

  test("with --yes it is done", async () => {
    const command = await prepare();
    const { result, requests } = await sentBy(() => runCli([...command.args, "--yes", "--json"], command.env));
    expect((result as CliResult).stderr).not.toContain("confirm with --yes");
    expect((result as CliResult).code).toBe(0);
    expect(requests).toContain(command.operation);
    await command.done();
  });

  test.skipIf(!script)(
    "on a terminal it says what will happen; answering no sends nothing that changes anything (exit 130)",
    async () => {
      const command = await prepare();
      const { result, requests } = await sentBy(async () => {
        const terminal = onTerminal(command.args, command.env);
        await terminal.answer(command.question, "n");
        return terminal.exited();
      });
      expect(result).toBe(130);
      expect(requests.filter((request) => !request.startsWith("GET "))).toEqual([]);
      await command.untouched();
    },
  );
});
