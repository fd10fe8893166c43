import { Command, InvalidArgumentError, Option } from "commander";
import { type Mode, modes } from "../../../generated/constants.ts";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { recordCommand } from "../../context.ts";
import { shownOnce } from "../../shown-once.ts";
import { apiKeyCreatedColumns } from "../../views.ts";
import { keyHygieneColumns } from "./list.ts";

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function parseExpiry(value: string): string {
  const at = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(at))
    throw new InvalidArgumentError("expected an RFC 3339 time, e.g. 2027-01-01T00:00:00Z");
  return new Date(at).toISOString();
}

export const keysCreateCommand = (): Command =>
  recordCommand(
    new Command("create")
      .description("Create an API key for an account (the full key is shown only now)")
      .argument("<account-id>", "account id")
      .addOption(new Option("--mode <mode>", "key mode").choices(modes).makeOptionMandatory())
      .option("--expires-at <time>", "when the key stops working (RFC 3339, in the future)", parseExpiry)
      .option("--allow-ip <cidr>", "an address or CIDR block the key may be used from (repeatable; default any)", collect),
    [
      "vendctl keys create 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --mode live",
      "vendctl keys create 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --mode live --allow-ip 203.0.113.0/24 --allow-ip 2001:db8::/48 --expires-at 2027-01-01T00:00:00Z",
    ],
    shownOnce<components["schemas"]["ApiKeyCreated"]>(
      [...apiKeyCreatedColumns, ...keyHygieneColumns],
      "Save this key now: it is shown only once. If it is lost, create another and revoke this one (vendctl keys revoke).",
    ),
    (ctx, accountId: string, flags: { mode: Mode; expiresAt?: string; allowIp?: string[] }) =>
      ctx.clients.admin().POST("/admin/v1/accounts/{account_id}/keys", {
        params: { path: { account_id: accountId } },
        body: { mode: flags.mode, expires_at: flags.expiresAt, allowed_ips: flags.allowIp },
      }),
  );
