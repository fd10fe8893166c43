import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { apiKeyColumns } from "../../views.ts";

export const keysRevokeCommand = withExample(
  new Command("revoke").description("Revoke an API key; it stops working at once").argument("<key-id>", "key id"),
  "vendctl keys revoke 5c1d2e3f-0000-4000-8000-000000000001",
).action(async (keyId: string, _flags: unknown, command: Command) => {
  const ctx = contextOf(command);
  const revoked = await unwrap(ctx.clients.admin().DELETE("/admin/v1/keys/{key_id}", { params: { path: { key_id: keyId } } }));
  await ctx.printer.record(revoked, apiKeyColumns);
});
