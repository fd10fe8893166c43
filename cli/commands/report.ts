import { Command, InvalidArgumentError, Option } from "commander";
import { type Mode, modes } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { unwrap } from "../client.ts";
import { actionCommand, commandGroup } from "../context.ts";
import type { Column } from "../output.ts";

type SettlementReport = components["schemas"]["SettlementReport"];
type MarginReport = components["schemas"]["MarginReport"];
type MarginLine = components["schemas"]["MarginLine"];
type MarginGroupBy = components["schemas"]["MarginGroupBy"];

const marginGroups: MarginGroupBy[] = ["provider", "service", "network", "account", "day"];

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

const marginColumns = (groupBy: MarginGroupBy): Column<MarginLine>[] => [
  { key: "key", header: groupBy.toUpperCase() },
  { key: "count" },
  { key: "amount_kobo", money: true },
  { key: "price_kobo", money: true },
  { key: "cost_kobo", money: true },
  { key: "margin_kobo", money: true },
  { key: "uncosted" },
];

/** The groups, then the total as a last row keyed `TOTAL`. */
const marginRows = (report: MarginReport): MarginLine[] => [...report.rows, { key: "TOTAL", ...report.total }];

interface MarginFlags {
  from: string;
  to: string;
  groupBy: MarginGroupBy;
  mode: Mode;
}

const lagosDate = (value: string): string => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new InvalidArgumentError("expected a day such as 2026-11-21 (Africa/Lagos)");
  return value;
};

const marginCommand = (): Command =>
  actionCommand(
    new Command("margin")
      .description(
        "Successful orders over Lagos days (from and to included): count, face value, price charged, provider cost " +
          "and margin, per provider, service, network, account or day, and in total (admin token)",
      )
      .requiredOption("--from <YYYY-MM-DD>", "the first day, in Africa/Lagos time", lagosDate)
      .requiredOption("--to <YYYY-MM-DD>", "the last day (included), in Africa/Lagos time", lagosDate)
      .addOption(new Option("--group-by <group>", "what a row is").choices(marginGroups).default("provider"))
      .addOption(new Option("--mode <mode>", "live orders, or test orders (the sandbox's)").choices(modes).default("live")),
    [
      "vendctl report margin --from 2026-11-01 --to 2026-11-30 --group-by service",
      "vendctl report margin --from 2026-11-01 --to 2026-11-30 --group-by day --csv > margin-november.csv",
    ],
    async ({ clients, printer }, flags: MarginFlags) => {
      const query = { from: flags.from, to: flags.to, group_by: flags.groupBy, mode: flags.mode };
      const report = await unwrap(clients.admin().GET("/admin/v1/reports/margin", { params: { query } }));
      if (printer.format === "json") return printer.record(report, []);
      if (printer.format === "table") {
        await printer.write(
          `Margin (${report.mode}) by ${report.group_by}, ${report.from_date} to ${report.to_date}, ${report.timezone}: ${report.from} to ${report.to}\n`,
        );
      }
      await printer.listAll(marginColumns(report.group_by), marginRows(report));
    },
  );

export const reportCommand = (): Command =>
  commandGroup(
    new Command("report").description("Reports for operators (admin token)"),
    [settlementCommand(), marginCommand()],
    "vendctl report settlement --provider vtu --date 2026-11-21 --csv",
  );
