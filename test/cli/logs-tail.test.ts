import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { stripVTControlCharacters } from "node:util";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { processTestMs, spawnProcess } from "../helpers/process.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { waitUntil } from "../helpers/wait.ts";
import { cliCommand, cliEnv, removeConfigDirs } from "./cli.ts";

type RequestLog = components["schemas"]["RequestLog"];

let server: TestServer;
let account: Awaited<ReturnType<typeof fundedAccount>>;

beforeAll(async () => {
  server = await startTestServer();
  account = await fundedAccount(server, 100_000, "logs-tail");
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

const keyEnv = (extra: Record<string, string | undefined> = {}) =>
  cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey, ...extra });

/** A `vendctl logs tail` process, once it says it is tailing. */
async function startTail(args: string[], env: Record<string, string | undefined>) {
  const tail = spawnProcess(cliCommand(["logs", "tail", ...args]), env);
  await tail.waitFor(/Tailing .*; Ctrl-C to stop/);
  return tail;
}

/** The JSON lines a tail printed so far. */
const jsonLines = (output: string): RequestLog[] =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as RequestLog);

/** A 404 no other request makes: its path names it. */
const missingTransaction = (client: TestServer["admin"], tag: string) => client.get(`/api/v1/transactions/txn_${tag}`);

describe("vendctl logs tail", () => {
  test(
    "prints a request made after it started, as JSON lines, and ends cleanly on Ctrl-C (exit 0)",
    async () => {
      const tail = await startTail(["--json"], keyEnv());
      try {
        const answer = await missingTransaction(account.client, "tailjson000000000000000");
        expect(answer.status).toBe(404);
        const requestId = answer.headers.get("x-request-id");
        await tail.waitFor(/txn_tailjson0+/, 10_000);
        const line = jsonLines(tail.output()).find((log) => log.path.endsWith("txn_tailjson000000000000000"));
        expect(line).toMatchObject({
          request_id: requestId,
          method: "GET",
          route: "/api/v1/transactions/{reference}",
          status: 404,
          error_code: "NOT_FOUND",
          account_id: account.id,
          mode: "test",
        });
        // The tail's own stream is not recorded, so it never prints itself.
        expect(jsonLines(tail.output()).some((log) => log.path.endsWith("/stream"))).toBe(false);
      } finally {
        expect(await tail.stop("SIGINT")).toBe(0);
      }
    },
    processTestMs,
  );

  test(
    "a line per request, its status coloured by class; --status 4xx leaves 2xx out; another account's never shows",
    async () => {
      const colour = { NO_COLOR: undefined, FORCE_COLOR: "1" };
      const all = await startTail(["--table"], keyEnv(colour));
      const failed = await startTail(["--table", "--status", "4xx"], keyEnv(colour));
      try {
        const other = await fundedAccount(server, 0, "logs-tail-other");
        await missingTransaction(other.client, "otheraccount00000000000");
        await account.client.get("/api/v1/wallet");
        const refused = await missingTransaction(account.client, "tailtable00000000000000");
        const requestId = refused.headers.get("x-request-id") ?? "";
        await all.waitFor(/txn_tailtable0+/, 10_000);
        await failed.waitFor(/txn_tailtable0+/, 10_000);

        const lineOf = (output: string, text: string) => output.split("\n").find((line) => line.includes(text)) ?? "";
        const yellow = "\x1b[33m";
        const green = "\x1b[32m";
        const line = lineOf(all.output(), "txn_tailtable");
        expect(stripVTControlCharacters(line)).toMatch(
          /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}404 {2}GET +\/api\/v1\/transactions\/txn_tailtable0+ {2}NOT_FOUND {2}[\d.]+ m?s {2}\S+$/,
        );
        expect(line).toContain(`${yellow}404\x1b[39m`);
        expect(line).toContain(`${yellow}NOT_FOUND`);
        expect(lineOf(all.output(), "txn_tailtable")).toContain(requestId);
        expect(lineOf(all.output(), "/api/v1/wallet")).toContain(`${green}200`);
        // The 2xx came before the 404 on the same connection: the filtered tail had it and left it out.
        expect(lineOf(failed.output(), "/api/v1/wallet")).toBe("");
        for (const tail of [all, failed]) expect(tail.output()).not.toContain("otheraccount");
      } finally {
        expect(await all.stop("SIGINT")).toBe(0);
        expect(await failed.stop("SIGINT")).toBe(0);
      }
    },
    processTestMs,
  );

  test(
    "after a dropped connection it reconnects and prints what was recorded meanwhile, once (Last-Event-ID)",
    async () => {
      const target = { host: "127.0.0.1", port: Number(new URL(server.url).port) };
      let proxy = await startTcpProxy(target);
      const port = proxy.port;
      const tail = await startTail(["--json"], keyEnv({ VENDCTL_BASE_URL: `http://127.0.0.1:${port}` }));
      try {
        await missingTransaction(account.client, "beforedrop0000000000000");
        await tail.waitFor(/txn_beforedrop0+/, 10_000);

        // The connection drops and stays refused until the request below is recorded: it can only come by resuming.
        await proxy.close();
        await tail.waitFor(/Connection lost \(.+\); reconnecting in \d+ s/, 10_000);
        const meanwhile = await missingTransaction(account.client, "whiledown00000000000000");
        const requestId = meanwhile.headers.get("x-request-id") ?? "";
        await waitUntil(
          async () => {
            const found = await server.admin.get("/admin/v1/request-logs", { query: { request_id: requestId } });
            return (found.json?.data as { items: unknown[] } | undefined)?.items.length === 1;
          },
          { what: `request ${requestId} recorded`, timeoutMs: 10_000, intervalMs: 100 },
        );
        proxy = await startTcpProxy(target, port);
        await tail.waitFor(/txn_whiledown0+/, 60_000);
        expect(tail.output()).toContain("Reconnected.");

        const paths = jsonLines(tail.output()).map((log) => log.path);
        expect(paths.filter((path) => path.endsWith("txn_beforedrop0000000000000"))).toHaveLength(1);
        expect(paths.filter((path) => path.endsWith("txn_whiledown00000000000000"))).toHaveLength(1);
        const ids = jsonLines(tail.output()).map((log) => Number(log.id));
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
      } finally {
        expect(await tail.stop("SIGINT")).toBe(0);
        await proxy.close();
      }
    },
    processTestMs,
  );

  test(
    "operators tail every account; a refused key ends the tail with the API's error (exit 1)",
    async () => {
      const admin = await startTail(
        ["--json", "--account", account.id],
        cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_ADMIN_TOKEN: testAdminToken }),
      );
      try {
        await missingTransaction(account.client, "operatortail00000000000");
        await admin.waitFor(/txn_operatortail0+/, 10_000);
        expect(jsonLines(admin.output()).find((log) => log.path.includes("operatortail"))?.key_prefix).toStartWith("rg_test_");
      } finally {
        expect(await admin.stop("SIGINT")).toBe(0);
      }

      const refused = spawnProcess(
        cliCommand(["logs", "tail"]),
        keyEnv({ VENDCTL_API_KEY: "rg_test_NotAKeyOfThisService000000" }),
      );
      expect(await refused.finished()).toBe(1);
      expect(refused.output()).toContain("UNAUTHENTICATED: ");
      expect(refused.output()).toMatch(/Request id: \S+ \(vendctl logs show \S+\)/);
    },
    processTestMs,
  );
});
