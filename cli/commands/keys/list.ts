import { Command } from "commander";
import type { components } from "../../../generated/openapi-types.ts";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import type { Column } from "../../output.ts";
import { apiKeyColumns, fields } from "../../views.ts";

type ApiKey = components["schemas"]["ApiKey"];

/** The key restrictions beside the admin columns; the calling key marked in the client's own listing. */
export const keyHygieneColumns: Column<ApiKey>[] = [
  ...fields<ApiKey>("expires_at", "last_used_at"),
  { key: "allowed_ips", header: "ALLOWED IPS", get: (key) => key.allowed_ips?.join(" ") ?? "any" },
];

const ownKeyColumns: Column<ApiKey>[] = [
  { key: "current", header: "", get: (key) => (key.current ? "*" : ""), only: "table" },
  ...apiKeyColumns.filter((column) => column.key !== "account_id"),
  ...keyHygieneColumns,
];

export const keysListCommand = (): Command =>
  actionCommand(
    new Command("list")
      .description(
        "List API keys, display prefixes only. Without an account id: your own account's keys in the mode of the key " +
          "you use (API key; * marks that key). With one: any account's keys (admin token)",
      )
      .argument("[account-id]", "account id (admin token)"),
    ["vendctl keys list", "vendctl keys list 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c"],
    async (ctx, accountId: string | undefined) => {
      if (accountId === undefined) {
        await ctx.printer.listAll(ownKeyColumns, await unwrap(ctx.clients.api().GET("/api/v1/keys")));
        return;
      }
      const params = { path: { account_id: accountId } };
      await ctx.printer.listAll(
        [...apiKeyColumns, ...keyHygieneColumns],
        await unwrap(ctx.clients.admin().GET("/admin/v1/accounts/{account_id}/keys", { params })),
      );
    },
  );
