import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { webhooksAddCommand } from "./webhooks/add.ts";
import { webhooksGetCommand } from "./webhooks/get.ts";
import { webhooksListCommand } from "./webhooks/list.ts";
import { webhooksListenCommand } from "./webhooks/listen.ts";
import { webhooksPingCommand } from "./webhooks/ping.ts";
import { webhooksRemoveCommand } from "./webhooks/remove.ts";
import { webhooksResendFailedCommand } from "./webhooks/resend-failed.ts";
import { webhooksRotateSecretCommand } from "./webhooks/rotate-secret.ts";
import { webhooksUpdateCommand } from "./webhooks/update.ts";

export const webhooksCommand = (): Command =>
  commandGroup(
    new Command("webhooks")
      .summary("Webhook endpoints, and a local receiver that checks signatures")
      .description("Webhook endpoints of the API key's account and mode, and a local receiver for testing"),
    [
      webhooksAddCommand(),
      webhooksListCommand(),
      webhooksGetCommand(),
      webhooksUpdateCommand(),
      webhooksRotateSecretCommand(),
      webhooksPingCommand(),
      webhooksResendFailedCommand(),
      webhooksRemoveCommand(),
      webhooksListenCommand(),
    ],
    "vendctl webhooks listen --forward-to http://localhost:3000/hooks   # a temporary test-mode endpoint",
    "vendctl webhooks add http://127.0.0.1:4242/ --json   # note the secret",
    "vendctl webhooks listen --port 4242 --secret whsec_…",
    "vendctl webhooks update ID --enable && vendctl webhooks resend-failed --from 2026-11-20 --to 2026-11-22",
  );
