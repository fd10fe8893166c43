import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { actionCommand } from "../../context.ts";
import { apiKeyColumns } from "../../views.ts";

export const keysRevokeCommand = (): Command =>
  actionCommand(
    new Command("revoke")
      .description("Revoke an API key; it stops working at once. Asks to confirm on a terminal; --yes without one")
      .argument("<key-id>", "key id")
      .addOption(yesOption()),
    ["vendctl keys revoke 5c1d2e3f-0000-4000-8000-000000000001 --yes"],
    async (ctx, keyId: string, flags: { yes?: boolean }) => {
      const admin = ctx.clients.admin();
      await confirmDestructive(ctx, flags.yes, `Revoke API key ${keyId}`, "Every request made with it fails from now on");
      const revoked = await unwrap(admin.DELETE("/admin/v1/keys/{key_id}", { params: { path: { key_id: keyId } } }));
      await ctx.printer.record(revoked, apiKeyColumns);
    },
  );
