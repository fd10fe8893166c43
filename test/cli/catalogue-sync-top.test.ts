import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { HttpResponse, http } from "msw";
import type { components } from "../../generated/openapi-types.ts";
import { processingRunner } from "../../src/background.ts";
import { products } from "../../src/db/schema/index.ts";
import { fastProcessing, vendAirtime } from "../helpers/processing.ts";
import { setupMockFetch, vtuTestConfig } from "../helpers/vtu-mock.ts";
import { cliServer, runCli, runJson } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type Schemas = components["schemas"];

const network = setupMockFetch({ onUnhandledFrame: "bypass" });
let mtnPrice = "550.00";
beforeAll(() => {
  network.enable();
  network.use(
    http.get(`${vtuTestConfig.baseUrl}/api/service-variations`, ({ request }) => {
      const serviceID = new URL(request.url).searchParams.get("serviceID") ?? "";
      const variations =
        serviceID === "mtn-data"
          ? [{ variation_code: "mtn-1gb-daily", name: "MTN 1GB - 1 day", variation_amount: mtnPrice }]
          : [];
      return HttpResponse.json({ response_description: "000", content: { serviceID, variations } });
    }),
  );
});
afterAll(() => network.disable());

const cli = cliServer({
  config: fastProcessing({
    providers: { vtu: vtuTestConfig },
    routing: { productCodes: { vtu: { "mtn-data-1gb-1d": "mtn-1gb-daily" } } },
  }),
  account: { name: "Top load", kobo: 100_000_000 },
});
const admin = () => cli.adminEnv();

async function priceOf(code: string): Promise<number | null> {
  const [row] = await cli.server.database.handle.db.select().from(products).where(eq(products.code, code));
  return row?.priceKobo ?? null;
}

describe("vendctl catalogue sync", () => {
  test("--dry-run --json is the API's dry run; nothing changes", async () => {
    const shown = await runJson<Schemas["CatalogueSync"]>(
      ["catalogue", "sync", "--provider", "vtu", "--dry-run", "--json"],
      admin(),
    );
    const direct = (await cli.server.admin.get("/admin/v1/providers/vtu/catalogue-sync")).json.data as Schemas["CatalogueSync"];
    expect({ ...shown, checked_at: "" }).toEqual({ ...direct, checked_at: "" });
    expect(shown.price_changes).toEqual([
      { product_code: "mtn-data-1gb-1d", plan_code: "mtn-1gb-daily", price_kobo: 50_000, face_value_kobo: 55_000 },
    ]);
    expect(await priceOf("mtn-data-1gb-1d")).toBe(50_000);
  });

  test("without a terminal and without --yes: usage error (exit 2), nothing sent", async () => {
    const result = await runCli(["catalogue", "sync", "--provider", "vtu"], admin());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--yes");
    expect(await priceOf("mtn-data-1gb-1d")).toBe(50_000);
  });

  test("--yes applies: the differences, then the products changed; a second run has nothing to apply", async () => {
    const result = await runCli(["catalogue", "sync", "--provider", "vtu", "--yes", "--table"], admin());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("vtu: 1 plans listed (data, cable)");
    expect(result.stdout).toContain("Price changes (1):");
    expect(result.stdout).toMatch(/mtn-data-1gb-1d\s+mtn-1gb-daily\s+NGN 500\.00\s+NGN 550\.00/);
    expect(result.stdout).toContain("Applied: 1 product(s) changed.");
    expect(await priceOf("mtn-data-1gb-1d")).toBe(55_000);
    const again = await runCli(["catalogue", "sync", "--provider", "vtu", "--yes", "--table"], admin());
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain("Nothing to apply");
  });

  test("--yes --json prints the API's result", async () => {
    mtnPrice = "575.00";
    const result = await runJson<Schemas["CatalogueSyncResult"]>(
      ["catalogue", "sync", "--provider", "vtu", "--yes", "--json"],
      admin(),
    );
    expect(result.applied.map((p) => [p.code, p.price_kobo])).toEqual([["mtn-data-1gb-1d", 57_500]]);
  });
});

describe("GET /admin/v1/operations/snapshot", () => {
  test.each([
    ["in the future", new Date(Date.now() + 3_600_000).toISOString(), "is in the future (by the database's clock)"],
    ["more than an hour back", new Date(Date.now() - 2 * 3_600_000).toISOString(), "must be at most one hour back"],
  ])("since %s: 400 naming since", async (_, since, message) => {
    const res = await cli.server.admin.get(`/admin/v1/operations/snapshot?since=${encodeURIComponent(since)}`);
    expect(res.status).toBe(400);
    expect(res.json.data.errors).toEqual([{ field: "since", message }]);
  });

  test("since the previous snapshot: exactly what happened in between, by the database's clock", async () => {
    const first = await cli.server.admin.get("/admin/v1/operations/snapshot");
    expect(first.status).toBe(200);
    expect(first.json.data.interval_seconds).toBe(60);
    await vendAirtime(cli.account.client, "08031110002");
    await tick();
    const since = first.json.data.generated_at as string;
    const next = await cli.server.admin.get(`/admin/v1/operations/snapshot?since=${encodeURIComponent(since)}`);
    expect(next.status).toBe(200);
    const snapshot = next.json.data as Schemas["OperationsSnapshot"];
    expect(snapshot.since).toBe(since);
    expect(snapshot.interval_seconds).toBe((Date.parse(snapshot.generated_at) - Date.parse(since)) / 1000);
    expect(snapshot.providers.find((p) => p.provider === "sandbox")).toMatchObject({ accepted: 1, successful: 1, failed: 0 });
  });

  test("since that is not a date-time: 400 naming since", async () => {
    const res = await cli.server.admin.get("/admin/v1/operations/snapshot?since=yesterday");
    expect(res.status).toBe(400);
    expect(res.json.data.errors[0].field).toBe("since");
  });
});

const tick = () => processingRunner({ ...cli.server.deps, apiBaseUrl: cli.server.url }, "top-worker").tick();

describe("vendctl top", () => {
  test("without a terminal: one snapshot as JSON, the API's data", async () => {
    await vendAirtime(cli.account.client, "08031110001");
    await tick();
    const snapshot = await runJson<Schemas["OperationsSnapshot"]>(["top"], admin());
    expect(snapshot.interval_seconds).toBe(60);
    expect(snapshot.providers.map((p) => p.provider)).toEqual(["sandbox", "vtu"]);
    expect(snapshot.providers[0]).toMatchObject({
      provider: "sandbox",
      mode: "test",
      accepted: 2,
      successful: 2,
      failed: 0,
      success_rate_5m: 1,
    });
    expect(snapshot.queue).toEqual({ due: 0, oldest_due_age_seconds: 0, pending: 0, stuck: 0 });
    expect(snapshot.webhooks).toEqual({ backlog: 0, oldest_due_age_seconds: 0 });
  });

  test.skipIf(!script)(
    "on a terminal: redraws every 2 s, the figures move under a small load, q quits with 0",
    async () => {
      const terminal = onTerminal(["top"], { ...admin(), TERM: "xterm" }, { rows: 30, cols: 160 });
      await terminal.expectPrompt("vendctl top");
      let loading = true;
      const load = (async () => {
        for (let n = 0; loading; n++) {
          await vendAirtime(cli.account.client, `0803222${String(n % 10_000).padStart(4, "0")}`);
          await tick();
          await Bun.sleep(100);
        }
      })();
      /** The sandbox's row in each frame drawn so far: accepts/s and completions/s. */
      const rows = () =>
        terminal
          .screen()
          .split("vendctl top  ")
          .slice(1)
          .flatMap((frame) => {
            const match = /^sandbox\s+test\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)/m.exec(frame);
            return match ? [{ accepts: Number(match[1]), completions: Number(match[2]), frame }] : [];
          });
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && rows().filter((r) => r.accepts > 0 && r.completions > 0).length < 2) await Bun.sleep(200);
      loading = false;
      await load;
      const busy = rows().filter((r) => r.accepts > 0 && r.completions > 0);
      expect(busy.length).toBeGreaterThanOrEqual(2);
      // Every frame shows the queue, the pending and stuck counts and the webhook backlog.
      expect(busy[0]?.frame).toMatch(/QUEUE\s+due \d+\s+oldest due [\d.]+s\s+pending \d+\s+stuck \d+/);
      expect(busy[0]?.frame).toMatch(/WEBHOOKS\s+backlog \d+\s+oldest due [\d.]+s/);
      expect(busy[0]?.frame).toContain("every 2s");
      // Rates are counted between successive snapshots: the figures move from one redraw to the next.
      const all = rows();
      expect(new Set(all.map((r) => `${r.accepts}/${r.completions}`)).size).toBeGreaterThan(1);
      terminal.type("q");
      expect(await terminal.exited()).toBe(0);
      // The terminal is given back: the cursor shown and the main screen restored.
      expect(terminal.rawScreen()).toContain("\x1b[?25h\x1b[?1049l");
    },
    60_000,
  );

  test.skipIf(!script)(
    "on a terminal: Ctrl-C quits with 0 too",
    async () => {
      const terminal = onTerminal(["top", "--interval", "1"], { ...admin(), TERM: "xterm" }, { rows: 30, cols: 160 });
      await terminal.expectPrompt("WEBHOOKS");
      terminal.type("\x03");
      expect(await terminal.exited()).toBe(0);
    },
    60_000,
  );
});
