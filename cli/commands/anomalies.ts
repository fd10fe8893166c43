import { Command, Option } from "commander";
import { type AnomalyKind, anomalyKinds } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { commandGroup, withExample } from "../context.ts";
import type { Column } from "../output.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../paging.ts";

type Anomaly = components["schemas"]["Anomaly"];

const anomalyColumns: Column<Anomaly>[] = [
  { key: "created_at", header: "TIME" },
  { key: "kind" },
  { key: "provider" },
  { key: "reference" },
  { key: "message" },
];

interface AnomaliesListFlags extends PagingFlags {
  kind?: AnomalyKind;
  provider?: string;
}

const anomaliesListCommand = (): Command =>
  pagedListCommand(
    withExample(
      new Command("list")
        .description("What operators must look at, newest first: double deliveries and low provider floats (admin token)")
        .addOption(new Option("--kind <kind>", "only this kind").choices(anomalyKinds))
        .option("--provider <name>", "only this provider's"),
      "vendctl anomalies list --kind double_delivery --all",
      "vendctl anomalies list --provider vtu --jsonl",
    ),
    resumable(anomalyColumns),
    (ctx, flags: AnomaliesListFlags) => {
      const client = ctx.clients.admin();
      const filters = { kind: flags.kind, provider: flags.provider };
      return queryPages(filters, (query) => client.GET("/admin/v1/anomalies", { params: { query } }));
    },
  );

export const anomaliesCommand = (): Command =>
  commandGroup(
    new Command("anomalies")
      .summary("Double deliveries and low provider floats (admin)")
      .description("Anomalies raised by the providers' work (admin token): double deliveries, low floats"),
    [anomaliesListCommand()],
    "vendctl anomalies list --kind low_balance",
  );
