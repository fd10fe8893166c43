import { describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { testAdminToken } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";
import { cliEnv, cliServer, runCli, runJson } from "./cli.ts";

type RequestLog = components["schemas"]["RequestLog"];
type RequestLogDetail = components["schemas"]["RequestLogDetail"];

/** 5 NGN in the wallet: a 100 NGN airtime vend is refused (402). */
const cli = cliServer({ account: { name: "logs-cli", kobo: 500 } });
const keyEnv = () => cli.apiEnv();
const adminEnv = () => cli.adminEnv();

const hint = /^Request id: (\S+) \(vendctl logs show \1\)$/m;

/** The request id the hint line of a failed command names. */
function hintedId(stderr: string): string {
  const id = stderr.match(hint)?.[1];
  if (!id) throw new Error(`no "Request id: …" line in:\n${stderr}`);
  return id;
}

/** Records are written a moment after the answer: the key's list, read until it holds `requestId`. */
function listedSoon(args: string[], env: Record<string, string | undefined>, requestId: string): Promise<RequestLog[]> {
  return waitUntil(
    async () => {
      const logs = await runJson<RequestLog[]>(["logs", ...args], env);
      return logs.some((log) => log.request_id === requestId) && logs;
    },
    { what: `request ${requestId} in vendctl logs ${args.join(" ")}`, timeoutMs: 10_000, intervalMs: 100 },
  );
}

/** A refused vend through vendctl: its stderr and the request id it names. */
async function refusedVend(): Promise<{ stderr: string; requestId: string }> {
  const vend = ["vend", "airtime", "--network", "mtn", "--phone", "08031234567", "--amount", "100", "--yes", "--json"];
  const result = await runCli(vend, keyEnv());
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("WALLET_INSUFFICIENT_FUNDS: ");
  return { stderr: result.stderr, requestId: hintedId(result.stderr) };
}

describe("vendctl logs with a client key", () => {
  test("a refused vend (402) names its request id; `logs --status 4xx` lists it, `logs show` has both bodies", async () => {
    const { stderr, requestId } = await refusedVend();
    // The hint is the line after the API's message, and the only addition to it.
    expect(stderr.trimEnd().split("\n").at(-1)).toBe(`Request id: ${requestId} (vendctl logs show ${requestId})`);

    const failed = await listedSoon(["--status", "4xx"], keyEnv(), requestId);
    expect(failed.every((log) => log.status >= 400 && log.status < 500)).toBe(true);
    expect(failed.find((log) => log.request_id === requestId)).toMatchObject({
      method: "POST",
      path: "/api/v1/vend",
      route: "/api/v1/vend",
      status: 402,
      error_code: "WALLET_INSUFFICIENT_FUNDS",
      mode: "test",
      account_id: cli.account.id,
    });
    // 2xx answers of the same key (the wallet's funding) exist but are filtered out.
    const all = await runJson<RequestLog[]>(["logs", "list"], keyEnv());
    expect(all.some((log) => log.status === 200)).toBe(true);

    const shown = await runCli(["logs", "show", requestId, "--table"], keyEnv());
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^REQUEST_ID +${requestId}$`, "m"));
    expect(shown.stdout).toMatch(/^STATUS +402$/m);
    expect(shown.stdout).toMatch(/^ERROR +WALLET_INSUFFICIENT_FUNDS$/m);
    expect(shown.stdout).toContain("Request body (POST /api/v1/vend)\n{\n");
    expect(shown.stdout).toContain('  "amount_kobo": 10000');
    // The destination is stored masked, as answers show it.
    expect(shown.stdout).not.toContain("08031234567");
    expect(shown.stdout).toContain("Response body (402)\n{\n");
    expect(shown.stdout).toContain('  "code": "WALLET_INSUFFICIENT_FUNDS"');

    const raw = await runJson<RequestLogDetail>(["logs", "show", requestId], keyEnv());
    expect(raw.request_id).toBe(requestId);
    expect(JSON.parse(raw.response_body ?? "null")).toMatchObject({ success: false, code: "WALLET_INSUFFICIENT_FUNDS" });
    expect(JSON.parse(raw.request_body ?? "null")).toMatchObject({ product_code: "mtn-airtime", amount_kobo: 10_000 });
    expect(raw).toMatchObject({ request_body_truncated: false, response_body_truncated: false });
  });

  test("`logs show` marks a body cut at 16 KB and shows it as text; a request without a body says (none)", async () => {
    const note = "n".repeat(20_000);
    const refused = await cli.account.client.post("/api/v1/wallet/fund", { amount_kobo: 100, note });
    expect(refused.status).toBe(400);
    const requestId = refused.headers.get("x-request-id") ?? "";
    await listedSoon(["--request-id", requestId], keyEnv(), requestId);

    const shown = await runCli(["logs", "show", requestId, "--table"], keyEnv());
    const [, requestPart = "", responsePart = ""] = shown.stdout.split(/^(?:Request|Response) body .*$/m);
    expect(requestPart).toStartWith('\n{"amount_kobo":100,"note":"nnnn');
    expect(requestPart.trimEnd()).toEndWith("n\n(truncated)");
    expect(requestPart.length).toBeLessThan(note.length);
    expect(responsePart).toContain('  "code": "VALIDATION_FAILED"');
    expect(responsePart).not.toContain("(truncated)");

    const balance = await runCli(["wallet", "balance", "--debug"], keyEnv());
    const readId = balance.stderr.match(/^< x-request-id: (\S+)$/m)?.[1] ?? "";
    await listedSoon(["--request-id", readId], keyEnv(), readId);
    const read = await runCli(["logs", "show", readId, "--table"], keyEnv());
    expect(read.stdout).toContain("Request body (GET /api/v1/wallet)\n(none)\n");
  });

  test("another account's key gets NOT_FOUND for it, and does not list it", async () => {
    const { requestId } = await refusedVend();
    await listedSoon(["--request-id", requestId], keyEnv(), requestId);
    const other = await fundedAccount(cli.server, 0, "logs-cli-other");
    const otherEnv = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: other.testKey });

    const shown = await runCli(["logs", "show", requestId], otherEnv);
    expect(shown.code).toBe(1);
    expect(shown.stdout).toBe("");
    expect(shown.stderr).toStartWith("NOT_FOUND: ");
    expect(await runJson<RequestLog[]>(["logs", "--request-id", requestId], otherEnv)).toEqual([]);
    // The same account's live key is another mode: not its request either.
    const live = await runCli(["logs", "show", requestId, "--api-key", cli.account.liveKey], keyEnv());
    expect(live.stderr).toStartWith("NOT_FOUND: ");
  });

  test("--limit reads as many pages as it takes and says how to read on; --csv has every field", async () => {
    for (let i = 0; i < 4; i++) expect((await runCli(["wallet", "balance"], keyEnv())).code).toBe(0);
    const balance = await runCli(["wallet", "balance", "--debug"], keyEnv());
    const lastId = balance.stderr.match(/^< x-request-id: (\S+)$/m)?.[1] ?? "";
    await listedSoon(["--path", "/api/v1/wallet"], keyEnv(), lastId);

    const same = ["--path", "/api/v1/wallet", "--method", "GET"];
    const three = await runCli(["logs", ...same, "--limit", "3", "--json"], keyEnv());
    expect(three.code).toBe(0);
    const logs = JSON.parse(three.stdout) as RequestLog[];
    expect(logs.map((log) => log.path)).toEqual(["/api/v1/wallet", "/api/v1/wallet", "/api/v1/wallet"]);
    expect(logs[0]?.request_id).toBe(lastId);
    const ids = logs.map((log) => Number(log.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const cursor = three.stderr.match(/^More requests: add --cursor (\S+) \(or raise --limit above 3\)$/m)?.[1];
    expect(cursor).toBeDefined();

    // A cursor resumes the same query: with other filters the API refuses it.
    const rest = await runJson<RequestLog[]>(["logs", ...same, "--cursor", cursor ?? "", "--limit", "100"], keyEnv());
    expect(rest.length).toBeGreaterThanOrEqual(2);
    expect(Number(rest[0]?.id)).toBeLessThan(Number(logs[2]?.id));

    const csv = await runCli(["logs", "--path", "/api/v1/wallet", "--limit", "1", "--csv"], keyEnv());
    const [header, row] = csv.stdout.trimEnd().split("\n");
    expect(header).toBe(
      "id,created_at,status,method,path,query,route,error_code,duration_ms,request_id,account_id,mode,key_id,key_prefix," +
        "operator,idempotency_key,idempotent_replayed,client_ip,user_agent",
    );
    expect(row).toContain(`,200,GET,/api/v1/wallet,,/api/v1/wallet,,`);
  });

  test("a table: time, status, method, path, error, duration, request id; a bad filter is a usage error", async () => {
    const { requestId } = await refusedVend();
    await listedSoon(["--status", "402"], keyEnv(), requestId);
    const table = await runCli(["logs", "--status", "402", "--table"], keyEnv());
    expect(table.code).toBe(0);
    const [header, first] = table.stdout.split("\n");
    expect(header?.split(/ {2,}/)).toEqual(["TIME", "STATUS", "METHOD", "PATH", "ERROR", "DURATION", "REQUEST_ID", "BY"]);
    expect(first).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +402 +POST +/api/v1/vend +WALLET_INSUFFICIENT_FUNDS +[\\d.]+ m?s +${requestId} +rg_test_`,
      ),
    );

    for (const args of [
      ["--status", "4zz"],
      ["--path", "api/v1/vend"],
      ["--method", "FETCH"],
      ["--account", "acme"],
    ]) {
      const refused = await runCli(["logs", ...args], keyEnv());
      expect(refused.code, args.join(" ")).toBe(2);
      expect(refused.stdout).toBe("");
    }
  });
});

describe("vendctl logs with operator credentials", () => {
  test("an admin error names its request id; `logs show` finds it through the admin API even beside a key", async () => {
    const failed = await runCli(["providers", "disable", "nope", "--reason", "x", "--yes"], adminEnv());
    expect(failed.code).toBe(1);
    const requestId = hintedId(failed.stderr);
    await listedSoon(["--operator", "ADMIN_TOKEN", "--status", "404"], adminEnv(), requestId);

    const both = { ...keyEnv(), VENDCTL_ADMIN_TOKEN: testAdminToken };
    const shown = await runJson<RequestLogDetail>(["logs", "show", requestId], both);
    expect(shown).toMatchObject({
      request_id: requestId,
      operator: "ADMIN_TOKEN",
      account_id: null,
      path: "/admin/v1/providers/nope/disable",
      status: 404,
      error_code: "NOT_FOUND",
    });
    // With the key alone the admin request is not its own.
    expect((await runCli(["logs", "show", requestId], keyEnv())).stderr).toStartWith("NOT_FOUND: ");
  });

  test("--account, --mode and --key filter every account's requests; without the admin token they are usage errors", async () => {
    const { requestId } = await refusedVend();
    const mine = ["--account", cli.account.id, "--mode", "test"];
    const listed = await listedSoon(mine, adminEnv(), requestId);
    expect(listed.every((log) => log.account_id === cli.account.id && log.mode === "test")).toBe(true);
    const keyId = listed.find((log) => log.request_id === requestId)?.key_id ?? "";
    const byKey = await runJson<RequestLog[]>(["logs", "--key", keyId, "--status", "402"], adminEnv());
    expect(byKey.map((log) => log.request_id)).toContain(requestId);
    const live = await runJson<RequestLog[]>(["logs", "--account", cli.account.id, "--mode", "live"], adminEnv());
    expect(live.every((log) => log.mode === "live")).toBe(true);
    expect(live.map((log) => log.request_id)).not.toContain(requestId);

    const refused = await runCli(["logs", "--account", cli.account.id], keyEnv());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--account reads every account's requests through the admin API");
  });

  test("errors without a request id have no hint: a usage error, an unreachable server", async () => {
    const usage = await runCli(["logs", "--status", "4zz"], keyEnv());
    expect(usage.stderr).not.toContain("Request id:");
    const unreachable = await runCli(["logs"], { ...keyEnv(), VENDCTL_BASE_URL: "http://127.0.0.1:1" });
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).not.toContain("Request id:");
  });
});
