import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { UsageError } from "../../errors.ts";
import { apiKeyColumns } from "../../views.ts";
import { keyHygieneColumns } from "./list.ts";

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export const keysRestrictCommand = (): Command =>
  withExample(
    new Command("restrict")
      .description(
        "Set the addresses one of your account's keys may be used from (API key): --allow-ip for each address or CIDR " +
          "block, or --any-ip to lift the list. Locking out the key in use needs --allow-lockout",
      )
      .argument("<key-id>", "key id (vendctl keys list)")
      .option("--allow-ip <cidr>", "an address or CIDR block (repeatable)", collect)
      .option("--any-ip", "any address may use the key")
      .option("--allow-lockout", "set the list even if it leaves out the address of this machine, for the key in use"),
    "vendctl keys restrict 5c1d2e3f-0000-4000-8000-000000000001 --allow-ip 203.0.113.0/24 --allow-ip 2001:db8::/48",
    "vendctl keys restrict 5c1d2e3f-0000-4000-8000-000000000001 --any-ip",
  ).action(async (keyId: string, flags: { allowIp?: string[]; anyIp?: boolean; allowLockout?: boolean }, command: Command) => {
    if (Boolean(flags.allowIp) === Boolean(flags.anyIp)) throw new UsageError("give either --allow-ip (one or more) or --any-ip");
    const ctx = contextOf(command);
    const body = { allowed_ips: flags.allowIp ?? null, allow_lockout: flags.allowLockout === true };
    const key = await unwrap(ctx.clients.api().PATCH("/api/v1/keys/{id}", { params: { path: { id: keyId } }, body }));
    await ctx.printer.record(key, [...apiKeyColumns, ...keyHygieneColumns]);
  });
