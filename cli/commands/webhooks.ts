import { Command } from "commander";
import { withExample } from "../context.ts";
import { webhooksAddCommand } from "./webhooks/add.ts";
import { webhooksListCommand } from "./webhooks/list.ts";
import { webhooksListenCommand } from "./webhooks/listen.ts";
import { webhooksRemoveCommand } from "./webhooks/remove.ts";

export const webhooksCommand = withExample(
  new Command("webhooks")
    .summary("Webhook endpoints, and a local receiver that checks signatures")
    .description("Webhook endpoints of the API key's account and mode, and a local receiver for testing")
    .addCommand(webhooksAddCommand)
    .addCommand(webhooksListCommand)
    .addCommand(webhooksRemoveCommand)
    .addCommand(webhooksListenCommand),
  "vendctl webhooks listen --forward-to http://localhost:3000/hooks   # a temporary test-mode endpoint",
  "vendctl webhooks add http://127.0.0.1:4242/ --json   # note the secret",
  "vendctl webhooks listen --port 4242 --secret whsec_…",
);
