import { Command, Option } from "commander";
import { type LedgerEntryKind, ledgerEntryKinds } from "../../../generated/constants.ts";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { withExample } from "../../context.ts";
import { addDateRange } from "../../dates.ts";
import type { Column } from "../../output.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../../paging.ts";

type StatementEntry = components["schemas"]["StatementEntry"];

interface StatementFlags extends PagingFlags {
  from?: string;
  to?: string;
  kind?: LedgerEntryKind;
}

const statementColumns: Column<StatementEntry>[] = [
  { key: "id" },
  { key: "created_at", header: "CREATED" },
  { key: "kind" },
  { key: "reference" },
  { key: "amount_kobo", money: true },
  { key: "balance_delta_kobo", money: true },
  { key: "held_delta_kobo", money: true },
  { key: "balance_after_kobo", money: true },
  { key: "held_after_kobo", money: true },
  { key: "available_after_kobo", money: true },
  { key: "note" },
];

export const walletStatementCommand = (): Command =>
  pagedListCommand(
    withExample(
      addDateRange(
        new Command("statement").description(
          "The wallet's ledger entries, newest first, each with how it moved the balance and the hold and the wallet after it " +
            "(the API key's account and mode); follows cursors with --all or --max",
        ),
      ).addOption(new Option("--kind <kind>", "only entries of this kind").choices(ledgerEntryKinds)),
      "vendctl wallet statement --from 2026-11-01 --to 2026-11-30 --all --csv > november.csv",
      "vendctl wallet statement --kind capture --max 50",
    ),
    resumable(statementColumns, "entries"),
    (ctx, flags: StatementFlags) => {
      const client = ctx.clients.api();
      const filters = { from: flags.from, to: flags.to, kind: flags.kind };
      return queryPages(filters, (query) => client.GET("/api/v1/wallet/ledger", { params: { query } }));
    },
  );
