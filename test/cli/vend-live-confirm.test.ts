import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { components } from "../../generated/openapi-types.ts";
import { idem } from "../helpers/accounts.ts";
import { startFakeVtuServer } from "../helpers/fake-vtu-server.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { type RecordingProxy, startRecordingProxy } from "../helpers/recording-proxy.ts";
import { vtuTestConfig } from "../helpers/vtu-mock.ts";
import { type CliResult, cliEnv, cliServer, runCli } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type Transaction = components["schemas"]["Transaction"];
type Env = Record<string, string | undefined>;

// Live vends need a live route: a VTU provider as a real HTTP server on this machine, the service's own adapter in front.
const provider = startFakeVtuServer({ delayMs: () => 0 });
const cli = cliServer({
  config: fastProcessing({ providers: { vtu: { ...vtuTestConfig, baseUrl: provider.url } } }),
  account: { name: "live confirmations", kobo: 10_000_000 },
});
const scratch = mkdtempSync(join(tmpdir(), "vendctl-live-"));

/**
 * Every request vendctl makes goes through this proxy to the test server, so a test can say what was sent:
 * "nothing" is an empty list, not a state that happens to look unchanged.
 */
let sent: string[] = [];
let proxy: RecordingProxy | undefined;
beforeAll(async () => {
  const credit = await cli.server.admin.post(
    `/admin/v1/accounts/${cli.account.id}/wallet/credit`,
    { mode: "live", amount_kobo: 10_000_000, note: "live float for the confirmation tests" },
    idem(),
  );
  expect(credit.status).toBe(200);
  proxy = startRecordingProxy(() => cli.server.url);
  sent = proxy.sent;
});
afterAll(() => {
  proxy?.stop();
  provider.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const proxied = (key: string): Env =>
  cliEnv({ VENDCTL_BASE_URL: proxy?.url, VENDCTL_API_KEY: key, TERM: "xterm", COLUMNS: "200" });
const asLive = () => proxied(cli.account.liveKey);
const asTest = () => proxied(cli.account.testKey);

/** What the run sent through the proxy, by method and path. */
async function sentBy<T>(run: () => Promise<T>): Promise<{ result: T; requests: string[] }> {
  sent.length = 0;
  const result = await run();
  return { result, requests: [...sent] };
}

/** The account's transactions in a mode, read on the server by the operator: what was vended, whoever asked. */
async function transactionsIn(mode: "live" | "test"): Promise<Transaction[]> {
  const res = await cli.server.admin.get("/admin/v1/transactions", { query: { account_id: cli.account.id, mode, limit: 100 } });
  expect(res.status).toBe(200);
  return res.json.data.items;
}

const liveBalance = async () => (await cli.server.client(cli.account.liveKey).get("/api/v1/wallet")).json.data.balance_kobo;

const vends: [string, string[]][] = [
  ["airtime", ["vend", "airtime", "--network", "mtn", "--phone", "08031234567", "--amount", "100"]],
  ["data", ["vend", "data", "--product", "mtn-data-1gb-1d", "--phone", "08031234567"]],
  ["cable", ["vend", "cable", "--biller", "dstv", "--smartcard", "7031234567", "--product", "dstv-compact"]],
  [
    "electricity",
    ["vend", "electricity", "--disco", "ikedc", "--meter", "45031234567", "--meter-type", "prepaid", "--amount", "1000"],
  ],
];

function ordersFile(name: string): string {
  const path = join(scratch, name);
  writeFileSync(path, "service,network,destination,amount\nairtime,mtn,08031234567,100\nairtime,glo,08051234567,200\n");
  return path;
}

describe("a live key's vends need a confirmation; a test key's never ask", () => {
  test.each(vends)("vend %s with a live key and no terminal: without --yes exit 2 and no request at all", async (_, args) => {
    const liveBefore = await transactionsIn("live");
    const balanceBefore = await liveBalance();
    const { result, requests } = await sentBy(() => runCli(args, asLive()));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "with a live key (real money): confirm with --yes (there is no terminal to ask on); nothing was sent",
    );
    expect(result.stderr).not.toContain("Idempotency-Key");
    // How we know nothing was vended: the proxy saw no request at all (not even a catalogue read), and the
    // server, asked directly, has the same live transactions and live balance as before.
    expect(requests).toEqual([]);
    expect(await transactionsIn("live")).toEqual(liveBefore);
    expect(await liveBalance()).toBe(balanceBefore);
  });

  test("vend bulk with a live key and no terminal: without --yes exit 2, no request, no results file", async () => {
    const file = ordersFile("live-no-yes.csv");
    const liveBefore = await transactionsIn("live");
    const { result, requests } = await sentBy(() => runCli(["vend", "bulk", file, "--no-wait"], asLive()));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Vending ${file} with a live key (real money): confirm with --yes`);
    expect(requests).toEqual([]);
    expect(existsSync(`${file}.results.csv`)).toBe(false);
    expect(await transactionsIn("live")).toEqual(liveBefore);
  });

  test("with --yes a live vend and a live bulk go through, as before", async () => {
    const liveBefore = (await transactionsIn("live")).length;
    const args = vends[0]?.[1] ?? [];
    const single = await sentBy(() => runCli([...args, "--yes", "--json"], asLive()));
    expect(single.result.stderr).toContain("Idempotency-Key: ");
    expect(single.result.code).toBe(0);
    expect(single.requests).toContain("POST /api/v1/vend");
    expect(JSON.parse(single.result.stdout)).toMatchObject({ mode: "live", product_code: "mtn-airtime", amount_kobo: 10_000 });

    const file = ordersFile("live-yes.csv");
    const bulk = await sentBy(() => runCli(["vend", "bulk", file, "--no-wait", "--yes", "--json"], asLive()));
    expect(bulk.result.code).toBe(0);
    expect(bulk.requests).toContain("POST /api/v1/vend/batches");
    expect((await transactionsIn("live")).length).toBe(liveBefore + 3);
  });

  test("a test key's vends and bulk need no --yes without a terminal (QA scripts loop on them)", async () => {
    const before = (await transactionsIn("test")).length;
    for (const [, args] of vends) {
      const result: CliResult = await runCli([...args, "--json"], asTest());
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
      expect(JSON.parse(result.stdout).mode).toBe("test");
    }
    const bulk = await runCli(["vend", "bulk", ordersFile("test-no-yes.csv"), "--no-wait"], asTest());
    expect(bulk.code).toBe(0);
    expect((await transactionsIn("test")).length).toBe(before + vends.length + 2);
  });
});

describe.skipIf(!script)("on a terminal", () => {
  test("a test key's vend with every flag asks nothing and is sent", async () => {
    const before = (await transactionsIn("test")).length;
    const terminal = onTerminal(vends[0]?.[1] ?? [], asTest());
    expect(await terminal.exited()).toBe(0);
    expect(terminal.screen()).not.toContain("(y/N)");
    expect(terminal.screen()).not.toContain("paying");
    expect((await transactionsIn("test")).length).toBe(before + 1);
  });

  test("a live key's vend shows the price and asks; no sends nothing, yes sends it", async () => {
    const liveBefore = (await transactionsIn("live")).length;
    sent.length = 0;
    const declined = onTerminal(vends[0]?.[1] ?? [], asLive());
    await declined.expectPrompt("Buy NGN 100.00 mtn airtime for 08031234567, paying NGN 97.00 from the live wallet?");
    await declined.expectPrompt("It is a real order, paid with real money.");
    declined.type("n\r");
    expect(await declined.exited()).toBe(130);
    expect(declined.screen()).toContain("cancelled; nothing was sent");
    expect(sent.filter((request) => request.startsWith("POST"))).toEqual([]);
    expect((await transactionsIn("live")).length).toBe(liveBefore);

    const accepted = onTerminal(vends[0]?.[1] ?? [], asLive());
    await accepted.expectPrompt("paying NGN 97.00 from the live wallet?");
    accepted.type("y\r");
    expect(await accepted.exited()).toBe(0);
    expect((await transactionsIn("live")).length).toBe(liveBefore + 1);
  });

  test("a live key's bulk asks once the file is checked; no sends nothing", async () => {
    const file = ordersFile("live-terminal.csv");
    sent.length = 0;
    const terminal = onTerminal(["vend", "bulk", file, "--no-wait"], asLive());
    await terminal.expectPrompt(`Vend the 2 orders of ${file} with a live key?`);
    terminal.type("n\r");
    expect(await terminal.exited()).toBe(130);
    expect(sent.filter((request) => request.startsWith("POST"))).toEqual([]);
    expect(existsSync(`${file}.results.csv`)).toBe(false);
  });
});
