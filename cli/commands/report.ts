import { Command, Option } from "commander";
import { type Mode, modes } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { unwrap } from "../client.ts";
import { actionCommand, commandGroup } from "../context.ts";
import type { Column } from "../output.ts";

type SettlementReport = components["schemas"]["SettlementReport"];

/** One row of the printed report: a service and network, or the day's total (`service` = `TOTAL`). */
interface SettlementRow {
  date: string;
  provider: string;
  mode: Mode;
  service: string;
  network: string | null;
  count: number;
  amount_kobo: number;
  price_kobo: number;
}

const settlementColumns: Column<SettlementRow>[] = [
  { key: "date" },
  { key: "provider" },
  { key: "mode" },
  { key: "service" },
  { key: "network" },
  { key: "count" },
  { key: "amount_kobo", money: true },
  { key: "price_kobo", money: true },
];

function settlementRows(report: SettlementReport): SettlementRow[] {
  const day = { date: report.date, provider: report.provider, mode: report.mode };
  return [
    ...report.by_service.map((line) => ({ ...day, ...line })),
    {
      ...day,
      service: "TOTAL",
      network: null,
      count: report.count,
      amount_kobo: report.amount_kobo,
      price_kobo: report.price_kobo,
    },
  ];
}

interface SettlementFlags {
  provider: string;
  date: string;
  mode: Mode;
}

const settlementCommand = (): Command =>
  actionCommand(
    new Command("settlement")
      .description(
        "Successful orders of one provider on one day by our records, per service and network and in total, to set " +
          "against the provider's statement; the day is a calendar day in Africa/Lagos time (UTC+01:00) (admin token)",
      )
      .requiredOption("--provider <name>", "the provider (vtu, clubkonnect, sandbox, …)")
      .requiredOption("--date <YYYY-MM-DD>", "the day, in Africa/Lagos time")
      .addOption(new Option("--mode <mode>", "live orders, or test orders (the sandbox's)").choices(modes).default("live")),
    [
      "vendctl report settlement --provider vtu --date 2026-11-21",
      "vendctl report settlement --provider vtu --date 2026-11-21 --csv > vtu-2026-11-21.csv",
    ],
    async ({ clients, printer }, flags: SettlementFlags) => {
      const query = { provider: flags.provider, date: flags.date, mode: flags.mode };
      const report = await unwrap(clients.admin().GET("/admin/v1/reports/settlement", { params: { query } }));
      if (printer.format === "json") return printer.record(report, []);
      if (printer.format === "table") {
        await printer.write(
          `Settlement ${report.provider} (${report.mode}) for ${report.date}, ${report.timezone}: ${report.from} to ${report.to}\n`,
        );
      }
      await printer.listAll(settlementColumns, settlementRows(report));
    },
  );

export const reportCommand = (): Command =>
  commandGroup(
    new Command("report").description("Reports for operators (admin token)"),
    [settlementCommand()],
    "vendctl report settlement --provider vtu --date 2026-11-21 --csv",
  );
