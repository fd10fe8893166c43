import { randomBytes } from "node:crypto";
import { Command, Option } from "commander";
import { type ProviderCallbackStatus, providerCallbackStatuses } from "../../../generated/constants.ts";
import { signTimestampedCallback } from "../../../src/lib/shared/callback-signature.ts";
import { defaultSandboxCallbackSecret, defaultSandboxCallbackToken } from "../../../src/lib/shared/sandbox-outcomes.ts";
import { transactionReferenceArgument } from "../../arguments.ts";
import { unwrap } from "../../client.ts";
import { actionCommand, integerOption } from "../../context.ts";
import { io } from "../../io.ts";
import { transactionDetailColumns } from "../../views.ts";

interface SendFlags {
  status: ProviderCallbackStatus;
  provider: string;
  providerReference?: string;
  eventId?: string;
  token?: string;
  units?: string;
  receipt?: string;
  deliveredMb?: number;
  message?: string;
  sandboxToken?: string;
  sandboxSecret?: string;
  timestamp?: number;
}

export const callbacksSendCommand = (): Command =>
  actionCommand(
    new Command("send")
      .description(
        "QA: post a correctly signed provider callback for a transaction (POST /callbacks/providers/{provider}), " +
          "as the sandbox provider would",
      )
      .addArgument(transactionReferenceArgument())
      .addOption(new Option("--status <status>", "outcome").choices(providerCallbackStatuses).makeOptionMandatory())
      .option("--provider <name>", "provider name in the URL", "sandbox")
      .option("--provider-reference <ref>", "provider's reference (default: a random SBX-…)")
      .option("--event-id <id>", "callback event id (default: random; reuse one to send a repeat)")
      .option("--token <token>", "electricity token")
      .option("--units <units>", "electricity units")
      .option("--receipt <number>", "receipt number")
      .option("--delivered-mb <mb>", "data delivered, in MB", integerOption(0))
      .option("--message <text>", "provider message")
      .option("--sandbox-token <token>", `bearer token (env VENDCTL_SANDBOX_TOKEN, default ${defaultSandboxCallbackToken})`)
      .option("--sandbox-secret <secret>", `signing secret (env VENDCTL_SANDBOX_SECRET, default ${defaultSandboxCallbackSecret})`)
      .option(
        "--timestamp <unix-seconds>",
        "signature time (default now; an old one drills the service's replay window)",
        integerOption(0),
      ),
    ["vendctl callbacks send txn_4kq9Zr2mXc81LwPb7sTfYhQe --status successful --token 1234-5678-9012 --units 45.6"],
    async (ctx, reference: string, flags: SendFlags) => {
      const bearer = flags.sandboxToken || io().env.VENDCTL_SANDBOX_TOKEN || defaultSandboxCallbackToken;
      const secret = flags.sandboxSecret || io().env.VENDCTL_SANDBOX_SECRET || defaultSandboxCallbackSecret;
      const body = {
        event_id: flags.eventId ?? `cb_${randomBytes(12).toString("hex")}`,
        reference,
        status: flags.status,
        provider_reference: flags.providerReference ?? `SBX-${randomBytes(6).toString("hex").toUpperCase()}`,
        ...(flags.token ? { token: flags.token } : {}),
        ...(flags.units ? { units: flags.units } : {}),
        ...(flags.receipt ? { receipt_number: flags.receipt } : {}),
        ...(flags.deliveredMb === undefined ? {} : { delivered_mb: flags.deliveredMb }),
        ...(flags.message ? { message: flags.message } : {}),
      };
      const raw = JSON.stringify(body);
      const transaction = await unwrap(
        ctx.clients.anonymous().POST("/callbacks/providers/{provider}", {
          params: {
            path: { provider: flags.provider },
            // The sandbox scheme; the service refuses a `t` outside its replay window (CALLBACK_REPLAY_WINDOW_SECONDS).
            header: { "X-Provider-Signature": signTimestampedCallback(secret, raw, flags.timestamp) },
          },
          headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
          body,
          // Signed bytes and sent bytes must be the same string.
          bodySerializer: () => raw,
        }),
      );
      await ctx.printer.note(`Callback ${body.event_id} accepted`);
      await ctx.printer.record(transaction, transactionDetailColumns);
    },
  );
