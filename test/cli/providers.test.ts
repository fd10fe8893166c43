import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { processingRunner } from "../../src/background.ts";
import { queryRows } from "../../src/db/rows.ts";
import { loadConfig } from "../../src/load-config.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { spawnProcess } from "../helpers/process.ts";
import { fastProcessing, vendAirtime } from "../helpers/processing.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { cliCommand, cliEnv, cliServer, runCli, runJson } from "./cli.ts";

type Schemas = components["schemas"];

const cli = cliServer({ config: fastProcessing() });
const admin = () => cli.adminEnv();

const tick = () => processingRunner({ ...cli.server.deps, apiBaseUrl: cli.server.url }, "w").tick();
const listJson = () => runJson<Schemas["ProviderOverview"]>(["providers", "list"], admin());
const sandboxOf = (overview: Schemas["ProviderOverview"]) => overview.providers.find((p) => p.name === "sandbox");
const statsOf = (name = "sandbox") => runJson<Schemas["ProviderStats"][]>(["providers", "status", name], admin());
/** A time as tables show it: local time, to the second. */
const localTime = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d";

/** A test-mode vend through the API: its HTTP status and error code. */
async function tryVend(client: TestServer["admin"]) {
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 },
    { headers: { "idempotency-key": randomUUID() } },
  );
  return { status: res.status, code: res.json?.code as string | undefined };
}

describe("vendctl providers with only the sandbox configured", () => {
  test("list: the sandbox row, no live routes, no providers file; --json is the API's data", async () => {
    const table = await runCli(["providers", "list", "--table"], admin());
    expect(table.code).toBe(0);
    // Fails if a column is missing, renamed or out of order, or the routes part is dropped.
    expect(table.stdout).toBe(
      [
        "NAME     MODE  ENABLED  AVAILABLE  BREAKER  BALANCE  LOW",
        "sandbox  test  true     true       closed   -        false",
        "",
        "No live routes.",
        "",
      ].join("\n"),
    );
    const overview = await listJson();
    const direct = await cli.server.admin.get("/admin/v1/providers");
    expect(overview).toEqual(direct.json.data);
    expect(overview.providers.map((p) => p.name)).toEqual(["sandbox"]);
  });

  test("disable --reason takes the sandbox out (test vends get 503 NO_ROUTE); enable restores it", async () => {
    const account = await fundedAccount(cli.server, 100_000, "Switched Ltd");
    const disabled = await runCli(["providers", "disable", "sandbox", "--reason", "drill 17", "--yes", "--table"], admin());
    expect(disabled).toMatchObject({ code: 0, stdout: "Provider sandbox: disabled (drill 17)\n" });
    expect(sandboxOf(await listJson())).toMatchObject({ enabled: false, available: false, disabled_reason: "drill 17" });
    // The switch is real only if the API refuses the vend: nothing created, 503.
    expect(await tryVend(account.client)).toEqual({ status: 503, code: "NO_ROUTE" });

    const enabled = await runCli(["providers", "enable", "sandbox", "--table"], admin());
    expect(enabled).toMatchObject({ code: 0, stdout: "Provider sandbox: enabled\n" });
    expect(sandboxOf(await listJson())).toMatchObject({ enabled: true, available: true, disabled_reason: null });
    expect((await tryVend(account.client)).status).toBe(202);
    await tick();
  });

  test("disable without --reason is a usage error (exit 2) and changes nothing", async () => {
    const result = await runCli(["providers", "disable", "sandbox"], admin());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--reason");
    // Had the CLI sent a request anyway, the sandbox would now be disabled.
    expect(sandboxOf(await listJson())?.enabled).toBe(true);
  });

  test("an unknown provider: the API's 404 message, exit 1, for disable, enable and status", async () => {
    // The message, then the line naming the answer's request id (`vendctl logs show` finds it).
    const message = /^NOT_FOUND: Unknown provider nope; the providers are sandbox\nRequest id: (\S+) \(vendctl logs show \1\)\n$/;
    for (const args of [
      ["disable", "nope", "--reason", "x", "--yes"],
      ["enable", "nope"],
      ["status", "nope"],
    ]) {
      const result = await runCli(["providers", ...args], admin());
      expect(result).toMatchObject({ code: 1, stdout: "" });
      expect(result.stderr).toMatch(message);
    }
  });

  test("status --json counts a processed vend; the table shows its rates", async () => {
    await tick();
    const [before] = await statsOf();
    const account = await fundedAccount(cli.server, 100_000, "Counted Ltd");
    await vendAirtime(account.client);
    await tick();
    const [after] = await statsOf();
    // One more order sent and delivered, in both windows: fails if the CLI prints anything but the API's figures.
    for (const minutes of [5, 60]) {
      const was = before?.windows.find((w) => w.minutes === minutes);
      const now = after?.windows.find((w) => w.minutes === minutes);
      expect(now?.sent).toBe((was?.sent ?? 0) + 1);
      expect(now?.successful).toBe((was?.successful ?? 0) + 1);
      expect(now).toMatchObject({ failed: 0, success_rate: 1, failure_rate: 0 });
      expect(now?.p50_ms).toBeNumber();
    }
    expect(after).toMatchObject({ provider: "sandbox", pending: 0, balance_kobo: null, low_balance: false });

    const all = await runJson<Schemas["ProviderStats"][]>(["providers", "status"], admin());
    expect(all.map((s) => s.provider)).toEqual(["sandbox"]);
    const table = await runCli(["providers", "status", "--table"], admin());
    expect(table.stdout).toMatch(
      /^NAME\s+STATE\s+PENDING\s+5M OK%\s+5M FAIL%\s+5M P50\/P95\s+60M OK%\s+60M FAIL%\s+60M P50\/P95\s+BALANCE\s+LOW\n/,
    );
    expect(table.stdout).toMatch(
      /\nsandbox\s+enabled\s+0\s+100\.0\s+0\.0\s+\d+\/\d+ms\s+100\.0\s+0\.0\s+\d+\/\d+ms\s+-\s+false\n$/,
    );
  });

  test("status --watch on a non-terminal prints refresh after refresh, without escapes, and SIGINT exits 0", async () => {
    const watch = spawnProcess(cliCommand(["providers", "status", "--watch", "--interval", "1", "--table"]), admin());
    try {
      await watch.waitFor(/(NAME\s+STATE[^\n]*\n[^\n]*\n\n[^\n]*\n){2}NAME\s+STATE/);
    } finally {
      expect(await watch.stop("SIGINT")).toBe(0);
    }
    const output = watch.output();
    // At least three tables, each after a time line, a blank line between refreshes, and no screen clearing.
    expect(output.match(/^sandbox\s+enabled/gm)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(output).toMatch(/^\d\d:\d\d:\d\d {2}every 1s, Ctrl-C to stop\nNAME/);
    expect(output).toContain("false\n\n");
    expect(output).not.toContain("\x1b[");
  });

  test("--interval below 1 is a usage error", async () => {
    const result = await runCli(["providers", "status", "--watch", "--interval", "0"], admin());
    expect(result.code).toBe(2);
  });
});

describe("vendctl anomalies list", () => {
  test("empty, then a double delivery inserted by SQL; --kind and --provider filter; --limit prints the next cursor", async () => {
    expect(await runJson(["anomalies", "list"], admin())).toEqual([]);
    expect((await runCli(["anomalies", "list", "--table"], admin())).stdout).toBe("No results.\n");

    const reference = "txn_4kq9Zr2mXc81LwPb7sTfYhQe";
    await cli.server.database.handle.db.execute(
      sql`insert into provider_anomalies (id, kind, provider, reference, message, created_at)
          values (${randomUUID()}, 'double_delivery', 'vtu', null, 'older one', now() - interval '1 minute'),
                 (${randomUUID()}, 'double_delivery', 'sandbox', ${reference}, 'delivered twice', now())`,
    );
    const table = await runCli(["anomalies", "list", "--table"], admin());
    expect(table.stdout).toMatch(/^TIME\s+KIND\s+PROVIDER\s+REFERENCE\s+MESSAGE\n/);
    expect(table.stdout).toMatch(
      new RegExp(
        `\\n${localTime}\\s+double_delivery\\s+sandbox\\s+${reference}\\s+delivered twice\\n${localTime}\\s+double_delivery\\s+vtu\\s+-\\s+older one\\n$`,
      ),
    );
    const listed = await runJson<Schemas["Anomaly"][]>(["anomalies", "list", "--kind", "double_delivery"], admin());
    expect(listed.map((a) => a.message)).toEqual(["delivered twice", "older one"]);
    expect(await runJson(["anomalies", "list", "--kind", "low_balance"], admin())).toEqual([]);
    const vtu = await runJson<Schemas["Anomaly"][]>(["anomalies", "list", "--provider", "vtu"], admin());
    expect(vtu.map((a) => a.message)).toEqual(["older one"]);

    const first = await runCli(["anomalies", "list", "--limit", "1", "--json"], admin());
    expect((JSON.parse(first.stdout) as Schemas["Anomaly"][]).map((a) => a.message)).toEqual(["delivered twice"]);
    const cursor = first.stderr.match(/--cursor (\S+)/)?.[1];
    expect(cursor).toBeString();
    const next = await runJson<Schemas["Anomaly"][]>(["anomalies", "list", "--limit", "1", "--cursor", cursor ?? ""], admin());
    expect(next.map((a) => a.message)).toEqual(["older one"]);
  });

  test("an unknown --kind is a usage error", async () => {
    expect((await runCli(["anomalies", "list", "--kind", "weird"], admin())).code).toBe(2);
  });
});

describe("vendctl transactions inspect (admin token)", () => {
  test("shows the provider and the sandbox attempt with its request id; --json is the API's data", async () => {
    const account = await fundedAccount(cli.server, 100_000, "Inspected Ltd");
    const reference = await vendAirtime(account.client);
    await tick();
    const [attempt] = await queryRows<{ request_id: string }>(
      cli.server.database.handle.db,
      sql`select a.request_id from provider_attempts a join transactions t on t.id = a.transaction_id
          where t.reference = ${reference} and a.provider = 'sandbox'`,
    );
    const requestId = attempt?.request_id;
    expect(requestId).toBeString();

    const table = await runCli(["transactions", "inspect", reference, "--table"], admin());
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^REFERENCE\\s+${reference}\\n`));
    expect(table.stdout).toMatch(/\nPROVIDER\s+sandbox\n\nPROVIDER\s+REQUEST_ID\s+STATUS\s+ANSWER_MS\s+SENT\s+MESSAGE\n/);
    expect(table.stdout).toMatch(new RegExp(`\\nsandbox\\s+${requestId}\\s+successful\\s+\\d+\\s+${localTime}\\s+-\\n$`));

    const json = await runJson<Schemas["AdminTransaction"]>(["transactions", "inspect", reference], admin());
    expect(json).toEqual((await cli.server.admin.get(`/admin/v1/transactions/${reference}`)).json.data);
    expect(json.provider_attempts?.map((a) => [a.provider, a.request_id, a.status])).toEqual([
      ["sandbox", requestId ?? "", "successful"],
    ]);
  });

  test("an unknown reference: the API's 404, exit 1", async () => {
    const result = await runCli(["transactions", "inspect", "txn_000000000000000000000000"], admin());
    expect(result.code).toBe(1);
    expect(result.stderr).toStartWith("NOT_FOUND: ");
  });
});

describe("vendctl providers list with routes, a float and an open breaker", () => {
  const defaults = loadConfig({});
  let routed: TestServer;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    const routing = {
      ...defaults.routing,
      file: "/etc/vend/providers.yaml",
      routes: [
        { service: "data" as const, network: "mtn", providers: ["vtu", "clubkonnect"] },
        { service: "airtime" as const, providers: ["vtu"] },
      ],
      lowBalanceKobo: { sandbox: 100_000 },
    };
    routed = await startTestServer(fastProcessing({ routing }));
    env = cliEnv({ VENDCTL_BASE_URL: routed.url, VENDCTL_ADMIN_TOKEN: testAdminToken });
    await routed.database.handle.db.execute(
      sql`insert into provider_states (provider, enabled, balance_kobo, balance_checked_at) values ('sandbox', true, 50000, now())`,
    );
    await routed.database.handle.db.execute(
      sql`insert into provider_breakers (provider, service, state, consecutive_failures, open_until)
          values ('sandbox', 'data', 'open', 5, now() + interval '10 minutes')`,
    );
  });
  afterAll(() => routed.close());

  test("the breaker, balance and LOW columns; routes with → and *; the providers file", async () => {
    const overview = await runJson<Schemas["ProviderOverview"]>(["providers", "list"], env);
    const openUntil = sandboxOf(overview)?.breakers.find((b) => b.service === "data")?.open_until;
    expect(openUntil).toBeString();
    const until = new Date(openUntil ?? "").toTimeString().slice(0, 8);

    const table = await runCli(["providers", "list", "--table"], env);
    expect(table.stdout).toContain(`sandbox  test  true     true       closed, open (data until ${until})  NGN 500.00  true\n`);
    expect(table.stdout).toContain(
      ["", "SERVICE  NETWORK  PROVIDERS", "data     mtn      vtu → clubkonnect", "airtime  *        vtu", ""].join("\n"),
    );
    expect(table.stdout).toEndWith("\nProviders file: /etc/vend/providers.yaml\n");

    const status = await runCli(["providers", "status", "--table"], env);
    expect(status.stdout).toMatch(
      new RegExp(`\\nsandbox\\s+enabled, open \\(data until ${until}\\)\\s+0\\s.*NGN 500\\.00\\s+true\\n$`),
    );
  });
});
