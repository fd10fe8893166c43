import { Command } from "commander";
import { withExample } from "../../context.ts";
import { addDateRange } from "../../dates.ts";
import { type LimitedListFlags, limitedListCommand, queryPages } from "../../paging.ts";
import {
  addOperatorFilters,
  addRequestLogFilters,
  filterQuery,
  logsScope,
  type OperatorFilters,
  operatorQuery,
  type RequestLogFilters,
  requestLogColumns,
} from "../../request-logs.ts";

interface ListFlags extends LimitedListFlags, RequestLogFilters, OperatorFilters {
  requestId?: string;
  idempotencyKey?: string;
  from?: string;
  to?: string;
}

const listOptions = (): Command =>
  addOperatorFilters(
    addDateRange(
      addRequestLogFilters(
        new Command("list")
          .summary("List requests and their answers, newest first (`vendctl logs` alone)")
          .description(
            "List recorded requests and their answers, newest first, without bodies (`vendctl logs show ID` has them). " +
              "With an API key: its account's requests in its mode; with an admin token (or --admin, or an operator " +
              "filter): every account's. Records are written about a second after each answer and kept 7 days by default.",
          ),
      )
        .option("--request-id <id>", "only requests with this X-Request-Id")
        .option("--idempotency-key <key>", "only requests sent with this Idempotency-Key (the first and every replay)"),
      "arrived ",
    ),
  );

export const logsListCommand = (): Command =>
  limitedListCommand(
    withExample(
      listOptions(),
      "vendctl logs --status 4xx",
      "vendctl logs --path /api/v1/vend --error-code WALLET_INSUFFICIENT_FUNDS --limit 100 --json",
      "vendctl logs --account 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --mode live --status 5xx --from 2026-11-28",
    ),
    requestLogColumns,
    "requests",
    25,
    (ctx, flags: ListFlags) => {
      const scope = logsScope(ctx, flags);
      const { requestId, idempotencyKey, from, to } = flags;
      const filters = { ...filterQuery(flags), request_id: requestId, idempotency_key: idempotencyKey, from, to };
      if (!scope.admin) return queryPages(filters, (query) => scope.client.GET("/api/v1/request-logs", { params: { query } }));
      const adminFilters = { ...filters, ...operatorQuery(flags) };
      return queryPages(adminFilters, (query) => scope.client.GET("/admin/v1/request-logs", { params: { query } }));
    },
  );
