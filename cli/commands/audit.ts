import { Command } from "commander";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { commandGroup, withExample } from "../context.ts";
import { addDateRange } from "../dates.ts";
import type { Column } from "../output.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../paging.ts";

type AuditEntry = components["schemas"]["AuditEntry"];

const auditColumns: Column<AuditEntry>[] = [
  { key: "created_at", header: "TIME" },
  { key: "operator" },
  { key: "action" },
  { key: "target_type", header: "TARGET" },
  { key: "target_id", header: "ID" },
  { key: "note" },
  { key: "request_id" },
];

interface AuditListFlags extends PagingFlags {
  operator?: string;
  action?: string;
  target?: string;
  from?: string;
  to?: string;
}

const auditListCommand = (): Command =>
  pagedListCommand(
    withExample(
      addDateRange(
        new Command("list")
          .description("Who changed what, newest first: every admin change, with its operator and request id")
          .option("--operator <name>", "only this operator's entries (ADMIN_TOKEN for the bootstrap token)")
          .option("--action <operation>", "only this action, e.g. creditWallet")
          .option("--target <id>", "only entries about this account, key, reference, provider, product or operator"),
        "",
      ),
      "vendctl audit list --operator ada --action creditWallet",
      "vendctl audit list --target 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --json",
    ),
    resumable(auditColumns),
    (ctx, flags: AuditListFlags) => {
      const client = ctx.clients.admin();
      const filters = { operator: flags.operator, action: flags.action, target_id: flags.target, from: flags.from, to: flags.to };
      return queryPages(filters, (query) => client.GET("/admin/v1/audit", { params: { query } }));
    },
  );

export const auditCommand = (): Command =>
  commandGroup(
    new Command("audit").description("The audit trail of admin changes (admin token)"),
    [auditListCommand()],
    "vendctl audit list --operator ada",
  );
